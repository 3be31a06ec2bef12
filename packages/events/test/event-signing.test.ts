import { describe, expect, it } from 'vitest';
import {
  decisionSigningPayload,
  generateSigningKey,
  OrderSigner,
  parseSigningKey,
  parseTrustedKeys,
  resolutionSigningPayload,
  verifyDecision,
  verifyResolution,
} from '@gatehouse/events';
import type { ApprovalDecision, ToolResult } from '@gatehouse/events';

const approvalKey = generateSigningKey('approval-1');
const policyKey = generateSigningKey('policy-1');
const approvalSigner = new OrderSigner(parseSigningKey(approvalKey.signingKey));
const policySigner = new OrderSigner(parseSigningKey(policyKey.signingKey));
const trusted = parseTrustedKeys(`${approvalKey.trustedKey},${policyKey.trustedKey}`);
const strangerSigner = new OrderSigner(parseSigningKey(generateSigningKey('stranger').signingKey));

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

const resolution: ToolResult = {
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

/** The field names a payload signs. */
function signedFields(payload: Buffer): string[] {
  const text = payload.toString('utf8');
  return Object.keys(JSON.parse(text.slice(text.indexOf('\n') + 1)) as object).sort();
}

describe('signed approval decisions', () => {
  it('signs every field of the decision but its schema version', () => {
    expect(signedFields(decisionSigningPayload(decision))).toEqual(Object.keys(decision).filter((k) => k !== 'schema_version').sort());
  });

  it('verifies a decision as signed and refuses each alteration, an unsigned copy and a stranger’s key', () => {
    const headers = approvalSigner.headersForDecision(decision);
    expect(verifyDecision(decision, headers, trusted)).toEqual({ ok: true, keyId: 'approval-1' });
    for (const field of Object.keys(decision).filter((k) => k !== 'schema_version') as (keyof ApprovalDecision)[]) {
      const value = decision[field];
      const altered = { ...decision, [field]: typeof value === 'number' ? value + 1 : value === null ? 'x' : `${String(value)}x` };
      expect(verifyDecision(altered, headers, trusted), field).toMatchObject({ ok: false, reason: 'bad_signature' });
    }
    expect(verifyDecision(decision, undefined, trusted)).toMatchObject({ ok: false, reason: 'unsigned' });
    expect(verifyDecision(decision, strangerSigner.headersForDecision(decision), trusted)).toMatchObject({ ok: false, reason: 'unknown_key' });
  });
});

describe('signed operator resolutions', () => {
  it('verifies a resolution as signed and refuses an altered result or status', () => {
    const headers = policySigner.headersForResolution(resolution);
    expect(verifyResolution(resolution, headers, trusted)).toEqual({ ok: true, keyId: 'policy-1' });
    expect(verifyResolution({ ...resolution, result: '{"new_version":99}' }, headers, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifyResolution({ ...resolution, status: 'error' }, headers, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
    const failed: ToolResult = {
      ...resolution,
      status: 'error',
      result: null,
      error: { code: 'UPSTREAM_ERROR', message: 'the write did not happen', retryable: false, field: null, permitted: [], next: null, retry_after_ms: null, details: '{"evidence":"row 7"}' },
    };
    const failedHeaders = policySigner.headersForResolution(failed);
    expect(verifyResolution(failed, failedHeaders, trusted)).toMatchObject({ ok: true });
    for (const altered of [{ code: 'NOT_FOUND' }, { retryable: true }, { details: '{"evidence":"row 8"}' }, { permitted: ['x'] }]) {
      const error = { ...(failed.error as NonNullable<ToolResult['error']>), ...altered };
      expect(verifyResolution({ ...failed, error }, failedHeaders, trusted), JSON.stringify(altered)).toMatchObject({ ok: false, reason: 'bad_signature' });
    }
    expect(signedFields(resolutionSigningPayload(resolution))).toEqual(
      ['arguments_sha256', 'command_id', 'completed_at', 'error', 'operation_id', 'result', 'run_id', 'status', 'tenant', 'tool'],
    );
  });
});

describe('domain separation', () => {
  it('never lets a signature over one kind of event vouch for another', () => {
    // Each kind signs its own domain prefix: a valid signature by a trusted key over a decision says nothing of a result.
    const decisionHeaders = approvalSigner.headersForDecision(decision);
    const resolutionHeaders = policySigner.headersForResolution(resolution);
    expect(verifyResolution(resolution, decisionHeaders, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifyDecision(decision, resolutionHeaders, trusted)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });
});
