import { describe, expect, it } from 'vitest';
import { sha256Hex } from '@gatehouse/contracts';
import {
  decisionSigningPayload,
  EventSigner,
  handoffSigningPayload,
  generateSigningKey,
  keyRing,
  orderSigningPayload,
  parseSigningKey,
  parseTrustedKeys,
  requestSigningPayload,
  resultSigningPayload,
  verifyDecision,
  verifyHandoff,
  verifyOrder,
  verifyRequest,
  verifyResult,
} from '@gatehouse/events';
import type { ApprovalDecision, ApprovalRequest, ExecutionOrder, ToolResult } from '@gatehouse/events';
import { REPLY_PARTITION_HEADER } from '@gatehouse/telemetry';

const approvalKey = generateSigningKey('approval-1');
const policyKey = generateSigningKey('policy-1');
const executorKey = generateSigningKey('executor-1');
const approvalSigner = new EventSigner(parseSigningKey(approvalKey.signingKey));
const policySigner = new EventSigner(parseSigningKey(policyKey.signingKey));
const executorSigner = new EventSigner(parseSigningKey(executorKey.signingKey));
const trusted = keyRing({
  approval: parseTrustedKeys(approvalKey.trustedKey),
  policy: parseTrustedKeys(policyKey.trustedKey),
  executor: parseTrustedKeys(executorKey.trustedKey),
});
const strangerSigner = new EventSigner(parseSigningKey(generateSigningKey('stranger').signingKey));

const decision: ApprovalDecision = {
  schema_version: 1,
  decision_id: 'dec_1',
  proposal_id: 'p_1',
  command_id: 'cmd-1',
  run_id: 'run-1',
  tenant: 'acme',
  tool: 'commit_address_change.v1',
  decision: 'approved',
  decided_by: 'lead@acme.test',
  decided_at: 1_700_000_000_000,
  reason: null,
  arguments_sha256: 'a'.repeat(64),
  target_type: 'customer',
  target_id: 'C-1',
  target_version: 17,
  approval_expires_at: 1_700_000_600_000,
};

const answer: ToolResult = {
  schema_version: 1,
  command_id: 'cmd-2',
  run_id: 'run-1',
  tenant: 'acme',
  tool: 'commit_address_change.v1',
  status: 'ok',
  operation_id: 'op-1',
  result: '{"new_version":18}',
  error: null,
  pending: null,
  arguments_sha256: 'b'.repeat(64),
  completed_at: 1_700_000_100_000,
  duration_ms: null,
};

const ARGUMENTS = '{"customer_id":"C-1"}';
const request: ApprovalRequest = {
  schema_version: 1,
  proposal_id: 'p_1',
  command_id: 'cmd-3',
  run_id: 'run-1',
  tenant: 'acme',
  principal: 'agent:support-bot',
  environment: 'production',
  tool: 'commit_address_change.v1',
  arguments: ARGUMENTS,
  arguments_sha256: sha256Hex(ARGUMENTS),
  target: { type: 'customer', id: 'C-1', version: 17 },
  effect: 'Changes the shipping address of C-1',
  diff: {
    changes: [{ field: 'shipping_address', before: 'old', after: 'new' }],
    recipients: ['c1@acme.test'],
    amount: { minor: 1250, currency: 'EUR' },
    affected_records: 1,
    irreversible: ['a letter is sent'],
  },
  approver_role: 'support-lead',
  rule_id: 'address-change',
  requested_at: 1_700_000_000_000,
  expires_at: 1_700_000_900_000,
};

/** The field names a payload signs. */
function signedFields(payload: Buffer): string[] {
  const text = payload.toString('utf8');
  return Object.keys(JSON.parse(text.slice(text.indexOf('\n') + 1)) as object).sort();
}

describe('signed approval decisions', () => {
  it('signs every field of the decision but its schema version', () => {
    expect(signedFields(decisionSigningPayload(decision))).toEqual(
      Object.keys(decision)
        .filter((k) => k !== 'schema_version')
        .sort(),
    );
  });

  it('verifies a decision as signed and refuses each alteration, an unsigned copy and a stranger’s key', () => {
    const headers = approvalSigner.headersFor('approvalsDecided', decision);
    expect(verifyDecision(decision, headers, trusted)).toEqual({ ok: true, keyId: 'approval-1', role: 'approval' });
    for (const field of Object.keys(decision).filter((k) => k !== 'schema_version') as (keyof ApprovalDecision)[]) {
      const value = decision[field];
      const altered = {
        ...decision,
        [field]: typeof value === 'number' ? value + 1 : value === null ? 'x' : typeof value === 'string' ? `${value}x` : null,
      };
      expect(verifyDecision(altered, headers, trusted), field).toMatchObject({ ok: false, reason: 'bad_signature' });
    }
    expect(verifyDecision(decision, undefined, trusted)).toMatchObject({ ok: false, reason: 'unsigned' });
    expect(verifyDecision(decision, strangerSigner.headersFor('approvalsDecided', decision), trusted)).toMatchObject({
      ok: false,
      reason: 'unknown_key',
    });
  });

  it('refuses a decision signed by the policy service’s key: only the approval service decides', () => {
    expect(verifyDecision(decision, policySigner.headersFor('approvalsDecided', decision), trusted)).toMatchObject({
      ok: false,
      reason: 'wrong_role',
    });
    expect(verifyDecision(decision, executorSigner.headersFor('approvalsDecided', decision), trusted)).toMatchObject({
      ok: false,
      reason: 'wrong_role',
    });
  });
});

describe('signed approval requests', () => {
  it('signs what a person is shown and the reply partition, the arguments through their hash', () => {
    expect(signedFields(requestSigningPayload(request, null))).toEqual(
      Object.keys(request)
        .filter((k) => k !== 'schema_version' && k !== 'arguments')
        .concat('reply_partition')
        .sort(),
    );
  });

  it('verifies a request the policy service signed, and refuses an altered diff, target, arguments or reply partition', () => {
    const routed = { [REPLY_PARTITION_HEADER]: '1' };
    const headers = { ...routed, ...policySigner.headersFor('approvalsRequested', request, routed) };
    expect(verifyRequest(request, headers, trusted)).toEqual({ ok: true, keyId: 'policy-1', role: 'policy' });
    const alterations: Record<string, ApprovalRequest> = {
      diff: { ...request, diff: { ...request.diff, amount: { minor: 125_000, currency: 'EUR' } } },
      'diff.changes': {
        ...request,
        diff: { ...request.diff, changes: [{ field: 'shipping_address', before: 'old', after: 'elsewhere' }] },
      },
      target: { ...request, target: { ...request.target, version: 18 } },
      approver_role: { ...request, approver_role: 'intern' },
      command_id: { ...request, command_id: 'cmd-other' },
    };
    for (const [name, altered] of Object.entries(alterations))
      expect(verifyRequest(altered, headers, trusted), name).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifyRequest({ ...request, arguments: '{"customer_id":"C-2"}' }, headers, trusted)).toMatchObject({
      ok: false,
      reason: 'arguments_altered',
    });
    expect(verifyRequest(request, { ...headers, [REPLY_PARTITION_HEADER]: '4' }, trusted)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('refuses a request signed by the approval service or an executor: only the policy service asks people', () => {
    expect(verifyRequest(request, approvalSigner.headersFor('approvalsRequested', request), trusted)).toMatchObject({
      ok: false,
      reason: 'wrong_role',
    });
    expect(verifyRequest(request, executorSigner.headersFor('approvalsRequested', request), trusted)).toMatchObject({
      ok: false,
      reason: 'wrong_role',
    });
  });
});

describe('the person an event names, signed too', () => {
  const person = { issuer: 'https://idp.example/realms/acme', subject: 'person-7', name: 'Otto Owner' };
  const decider = { issuer: person.issuer, subject: 'person-1', name: 'Lena Lead', auth_time: 1_700_000_000_000 };

  it('signs an event that names no person exactly as before, so earlier readers still verify it', () => {
    expect(decisionSigningPayload(decision).toString('utf8')).toMatch(/^gatehouse\.approval-decision\.v1\n/);
    expect(decisionSigningPayload({ ...decision, decider: null }).equals(decisionSigningPayload(decision))).toBe(true);
    expect(requestSigningPayload({ ...request, on_behalf_of: null }, 1).equals(requestSigningPayload(request, 1))).toBe(true);
  });

  it('signs the person under the next prefix, and refuses an event whose person was changed, removed or added', () => {
    const withDecider = { ...decision, decider };
    expect(decisionSigningPayload(withDecider).toString('utf8')).toMatch(/^gatehouse\.approval-decision\.v2\n/);
    const decided = approvalSigner.headersFor('approvalsDecided', withDecider);
    expect(verifyDecision(withDecider, decided, trusted)).toMatchObject({ ok: true });
    expect(verifyDecision({ ...withDecider, decider: { ...decider, subject: 'person-7' } }, decided, trusted)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyDecision({ ...withDecider, decider: null }, decided, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });

    const behalf = { ...request, on_behalf_of: person };
    expect(requestSigningPayload(behalf, null).toString('utf8')).toMatch(/^gatehouse\.approval-request\.v2\n/);
    const asked = policySigner.headersFor('approvalsRequested', behalf);
    expect(verifyRequest(behalf, asked, trusted)).toMatchObject({ ok: true });
    expect(verifyRequest({ ...behalf, on_behalf_of: { ...person, subject: 'person-1' } }, asked, trusted)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyRequest({ ...behalf, on_behalf_of: null }, asked, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
    const plain = policySigner.headersFor('approvalsRequested', request);
    expect(verifyRequest(behalf, plain, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('signs an order’s contract hash under the next prefix, and refuses an order whose hash was changed, removed or added', () => {
    const order = {
      ...request,
      order_id: 'o',
      effect: 'write',
      approval: null,
      idempotency_key: null,
      deadline_at: null,
      issued_at: 1,
      on_behalf_of: person,
      contract_sha256: 'c'.repeat(64),
    } as unknown as ExecutionOrder;
    expect(orderSigningPayload(order, null).toString('utf8')).toMatch(/^gatehouse\.execution-order\.v4\n/);
    const signed = policySigner.headersFor('execute', order);
    expect(verifyOrder(order, signed, trusted, 0)).toMatchObject({ ok: true });
    const without: Record<string, unknown> = { ...order };
    delete without['contract_sha256'];
    for (const altered of [
      { ...order, contract_sha256: 'd'.repeat(64) },
      { ...order, contract_sha256: null },
      without as unknown as ExecutionOrder,
    ])
      expect(verifyOrder(altered, signed, trusted, 0)).toMatchObject({
        ok: false,
        reason: 'bad_signature',
      });
    const earlier = { ...order, contract_sha256: null };
    expect(orderSigningPayload(earlier, null).toString('utf8')).toMatch(/^gatehouse\.execution-order\.v3\n/);
    expect(verifyOrder(order, policySigner.headersFor('execute', earlier), trusted, 0)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('signs a step-up rule’s recent sign-in, so a request cannot be relieved of it', () => {
    const risky = { ...request, recent_sign_in_s: 300 };
    expect(requestSigningPayload(risky, null).toString('utf8')).toMatch(/^gatehouse\.approval-request\.v2\n/);
    const asked = policySigner.headersFor('approvalsRequested', risky);
    expect(verifyRequest(risky, asked, trusted)).toMatchObject({ ok: true });
    expect(verifyRequest({ ...risky, recent_sign_in_s: null }, asked, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifyRequest({ ...risky, recent_sign_in_s: 86_400 }, asked, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });
});

describe('signed results', () => {
  it('signs every field of the result but its schema version', () => {
    expect(signedFields(resultSigningPayload(answer))).toEqual(
      Object.keys(answer)
        .filter((k) => k !== 'schema_version')
        .sort(),
    );
  });

  it('verifies a result from each service that answers, and refuses an altered result, status, error or pending notice', () => {
    for (const [signer, keyId] of [
      [policySigner, 'policy-1'],
      [approvalSigner, 'approval-1'],
      [executorSigner, 'executor-1'],
    ] as const) {
      expect(verifyResult(answer, signer.headersFor('results', answer), trusted)).toMatchObject({ ok: true, keyId });
    }
    const headers = executorSigner.headersFor('results', answer);
    expect(verifyResult({ ...answer, result: '{"new_version":99}' }, headers, trusted)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyResult({ ...answer, status: 'error' }, headers, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifyResult({ ...answer, command_id: 'cmd-other' }, headers, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
    const failed: ToolResult = {
      ...answer,
      status: 'error',
      result: null,
      error: {
        code: 'UPSTREAM_ERROR',
        message: 'the write did not happen',
        retryable: false,
        field: null,
        permitted: [],
        next: null,
        retry_after_ms: null,
        details: '{"evidence":"row 7"}',
      },
    };
    const failedHeaders = policySigner.headersFor('results', failed);
    expect(verifyResult(failed, failedHeaders, trusted)).toMatchObject({ ok: true });
    for (const altered of [{ code: 'NOT_FOUND' }, { retryable: true }, { details: '{"evidence":"row 8"}' }, { permitted: ['x'] }]) {
      const error = { ...(failed.error as NonNullable<ToolResult['error']>), ...altered };
      expect(verifyResult({ ...failed, error }, failedHeaders, trusted), JSON.stringify(altered)).toMatchObject({
        ok: false,
        reason: 'bad_signature',
      });
    }
    const pending: ToolResult = {
      ...answer,
      status: 'pending_approval',
      result: null,
      pending: { proposal_id: 'p_1', approver_role: 'support-lead', expires_at: 1 },
    };
    const pendingHeaders = policySigner.headersFor('results', pending);
    expect(
      verifyResult({ ...pending, pending: { proposal_id: 'p_1', approver_role: 'intern', expires_at: 1 } }, pendingHeaders, trusted),
    ).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a result no key signed, or that a stranger signed', () => {
    expect(verifyResult(answer, undefined, trusted)).toMatchObject({ ok: false, reason: 'unsigned' });
    expect(verifyResult(answer, strangerSigner.headersFor('results', answer), trusted)).toMatchObject({ ok: false, reason: 'unknown_key' });
  });
});

describe('signed operator handoffs', () => {
  const handoff = {
    schema_version: 1,
    handoff_id: 'hnd_1',
    command_id: 'cmd-9',
    run_id: 'run-1',
    tenant: 'acme',
    tool: 'commit_address_change.v1',
    proposal_id: 'p_1',
    idempotency_key: 'run-1:p_1:commit',
    arguments_sha256: 'c'.repeat(64),
    reason: 'timeout',
    last_error: 'status query: not found',
    executor: 'exec-1',
    detected_at: 1,
  };

  it('signs every field, verifies under an executor key only, and refuses an altered last_error', () => {
    expect(signedFields(handoffSigningPayload(handoff))).toEqual(
      Object.keys(handoff)
        .filter((k) => k !== 'schema_version')
        .sort(),
    );
    const headers = executorSigner.headersFor('operator', handoff);
    expect(verifyHandoff(handoff, headers, trusted)).toMatchObject({ ok: true, role: 'executor' });
    expect(verifyHandoff({ ...handoff, last_error: 'status query: applied' }, headers, trusted)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyHandoff(handoff, policySigner.headersFor('operator', handoff), trusted)).toMatchObject({
      ok: false,
      reason: 'wrong_role',
    });
  });
});

describe('domain separation', () => {
  it('never lets a signature over one kind of event vouch for another', () => {
    // Each kind signs its own domain prefix: a valid signature by a trusted key over a decision says nothing of a result.
    const decisionHeaders = approvalSigner.headersFor('approvalsDecided', decision);
    const resultHeaders = approvalSigner.headersFor('results', answer);
    expect(verifyResult(answer, decisionHeaders, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifyDecision(decision, resultHeaders, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
    // The same fields read as an order and as a request: the approval key signs orders, the prefix still tells them apart.
    const order = {
      ...request,
      order_id: 'o',
      effect: 'write',
      proposal_id: 'p_1',
      approval: null,
      idempotency_key: null,
      deadline_at: null,
      issued_at: 1,
    } as unknown as ExecutionOrder;
    expect(verifyOrder(order, approvalSigner.headersFor('approvalsRequested', request), trusted, 0)).toMatchObject({ ok: false });
  });

  it('signs nothing for a topic whose events are not signed (the agents’ commands)', () => {
    expect(
      policySigner.headersFor('commands', {
        schema_version: 1,
        command_id: 'c',
        run_id: 'r',
        tenant: 't',
        tool: 'x.v1',
        arguments: '{}',
        sent_at: 0,
        deadline_at: null,
      }),
    ).toEqual({});
  });
});
