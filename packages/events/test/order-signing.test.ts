import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '@gatehouse/contracts';
import {
  assertSignsAs,
  EventSigner,
  generateSigningKey,
  KEY_ID_HEADER,
  keyRing,
  orderSigningPayload,
  parseSigningKey,
  parseTrustedKeys,
  SIGNATURE_HEADER,
  SigningKeyError,
  verifyOrder,
} from '@gatehouse/events';
import type { ApprovalGrant, ExecutionOrder, SignatureCheck, SignedHeaders } from '@gatehouse/events';
import { REPLY_PARTITION_HEADER } from '@gatehouse/telemetry';

const NOW = 1_700_000_100_000;
const ARGUMENTS = '{"address":{"city":"Springfield","line1":"1 Main Street"},"customer_id":"cus_1","expected_version":17}';

const grant: ApprovalGrant = {
  approval_id: 'apr-1',
  approved_by: 'alice@acme.test',
  approved_at: 1_700_000_000_000,
  expires_at: 1_700_000_600_000,
  arguments_sha256: sha256Hex(ARGUMENTS),
  target_version: 17,
};

const order: ExecutionOrder = {
  schema_version: 1,
  order_id: 'ord-1',
  command_id: 'cmd-1',
  run_id: 'run-1',
  tenant: 'acme',
  principal: 'agent:support-bot',
  environment: 'prod',
  tool: 'commit_address_change.v1',
  effect: 'write',
  arguments: ARGUMENTS,
  arguments_sha256: sha256Hex(ARGUMENTS),
  proposal_id: 'prop-1',
  approval: grant,
  idempotency_key: 'idem-1',
  deadline_at: 1_700_000_900_000,
  issued_at: 1_700_000_050_000,
};

const policyKey = generateSigningKey('policy-2025-01');
const approvalKey = generateSigningKey('approval-2025-01');
const policySigner = new EventSigner(parseSigningKey(policyKey.signingKey));
const trusted = keyRing({ policy: parseTrustedKeys(policyKey.trustedKey), approval: parseTrustedKeys(approvalKey.trustedKey) });

function refusal(check: SignatureCheck): string {
  return check.ok ? 'ok' : check.reason;
}

function withGrant(change: Partial<ApprovalGrant>): (o: ExecutionOrder) => ExecutionOrder {
  return (o) => ({ ...o, approval: { ...grant, ...change } });
}

// One alteration per signed field, named by its path in the payload; the test below checks the
// names against the payload itself, so a field added to the payload without a case here fails.
const alterations: Record<string, (o: ExecutionOrder) => ExecutionOrder> = {
  order_id: (o) => ({ ...o, order_id: 'ord-2' }),
  command_id: (o) => ({ ...o, command_id: 'cmd-2' }),
  run_id: (o) => ({ ...o, run_id: 'run-2' }),
  tenant: (o) => ({ ...o, tenant: 'globex' }),
  principal: (o) => ({ ...o, principal: 'agent:other-bot' }),
  environment: (o) => ({ ...o, environment: 'staging' }),
  tool: (o) => ({ ...o, tool: 'refund.v1' }),
  effect: (o) => ({ ...o, effect: 'read' }),
  // Both hashes move together with new arguments: only the signature can tell.
  arguments_sha256: (o) => ({ ...o, arguments: '{}', arguments_sha256: sha256Hex('{}') }),
  proposal_id: (o) => ({ ...o, proposal_id: null }),
  approval_id: withGrant({ approval_id: 'apr-2' }),
  approval: (o) => ({ ...o, approval: null }),
  'approval.approval_id': withGrant({ approval_id: 'apr-3' }),
  'approval.approved_by': withGrant({ approved_by: 'mallory@acme.test' }),
  'approval.approved_at': withGrant({ approved_at: grant.approved_at + 1 }),
  'approval.expires_at': withGrant({ expires_at: grant.expires_at + 86_400_000 }),
  'approval.arguments_sha256': withGrant({ arguments_sha256: sha256Hex('{}') }),
  'approval.target_version': withGrant({ target_version: null }),
  idempotency_key: (o) => ({ ...o, idempotency_key: 'idem-2' }),
  deadline_at: (o) => ({ ...o, deadline_at: null }),
  issued_at: (o) => ({ ...o, issued_at: o.issued_at + 1 }),
};

function signedFieldPaths(o: ExecutionOrder): string[] {
  const text = orderSigningPayload(o, null).toString('utf8');
  const signed = JSON.parse(text.slice(text.indexOf('\n') + 1)) as Record<string, unknown>;
  return Object.entries(signed).flatMap(([name, value]) =>
    value !== null && typeof value === 'object' ? [name, ...Object.keys(value).map((inner) => `${name}.${inner}`)] : [name],
  );
}

describe('the signed payload', () => {
  // Issuers and executors deploy separately: the bytes must not drift with a refactor.
  it('is the domain prefix and the canonical JSON of the signed fields, without the arguments', () => {
    expect(orderSigningPayload(order, null).toString('utf8')).toBe(
      'gatehouse.execution-order.v2\n' +
        '{"approval":{"approval_id":"apr-1","approved_at":1700000000000,"approved_by":"alice@acme.test",' +
        `"arguments_sha256":"${sha256Hex(ARGUMENTS)}","expires_at":1700000600000,"target_version":17},` +
        `"approval_id":"apr-1","arguments_sha256":"${sha256Hex(ARGUMENTS)}","command_id":"cmd-1","deadline_at":1700000900000,` +
        '"effect":"write","environment":"prod","idempotency_key":"idem-1","issued_at":1700000050000,"order_id":"ord-1",' +
        '"principal":"agent:support-bot","proposal_id":"prop-1","reply_partition":null,"run_id":"run-1","tenant":"acme","tool":"commit_address_change.v1"}',
    );
  });

  it('does not depend on the order of the fields in the event, nor on fields outside the list', () => {
    const reordered = Object.fromEntries(Object.entries(order).reverse()) as unknown as ExecutionOrder;
    const withExtra = { ...order, approval: { ...grant, note: 'not signed' } } as ExecutionOrder;
    expect(orderSigningPayload(reordered, null).equals(orderSigningPayload(order, null))).toBe(true);
    expect(orderSigningPayload(withExtra, null).equals(orderSigningPayload(order, null))).toBe(true);
  });

  // The reply partition travels in a header; its cases are below.
  it('has an alteration case for every signed field', () => {
    expect([...Object.keys(alterations), 'reply_partition'].sort()).toEqual(signedFieldPaths(order).sort());
  });

  it('signs the reply partition the answers go to', () => {
    expect(orderSigningPayload(order, 3).toString('utf8')).toContain('"reply_partition":3');
  });
});

describe('verifyOrder', () => {
  it('accepts an order as it was signed, naming the key', () => {
    expect(verifyOrder(order, policySigner.headersFor('execute', order), trusted, NOW)).toEqual({
      ok: true,
      keyId: 'policy-2025-01',
      role: 'policy',
    });
    expect(policySigner.headersFor('execute', order)).toEqual({
      [SIGNATURE_HEADER]: expect.any(String) as string,
      [KEY_ID_HEADER]: 'policy-2025-01',
    });
  });

  it('refuses an order with any signed field altered after signing as bad_signature', () => {
    const headers = policySigner.headersFor('execute', order);
    for (const [field, alter] of Object.entries(alterations)) {
      const altered = alter(order);
      expect(altered, field).not.toEqual(order);
      expect(refusal(verifyOrder(altered, headers, trusted, NOW)), field).toBe('bad_signature');
    }
  });

  // Whoever can write to the topic must not choose where a real order's answers go.
  it('refuses an order whose reply partition was changed, added or removed after signing as bad_signature', () => {
    const routed = { [REPLY_PARTITION_HEADER]: '2' };
    const headers = { ...routed, ...policySigner.headersFor('execute', order, routed) };
    expect(verifyOrder(order, headers, trusted, NOW).ok).toBe(true);
    expect(refusal(verifyOrder(order, { ...headers, [REPLY_PARTITION_HEADER]: '5' }, trusted, NOW))).toBe('bad_signature');
    const unrouted: Record<string, string> = { ...headers };
    delete unrouted[REPLY_PARTITION_HEADER];
    expect(refusal(verifyOrder(order, unrouted, trusted, NOW))).toBe('bad_signature');
    const plain = policySigner.headersFor('execute', order);
    expect(refusal(verifyOrder(order, { ...plain, [REPLY_PARTITION_HEADER]: '0' }, trusted, NOW))).toBe('bad_signature');
  });

  it('refuses an order signed by a key of a service that does not order executions as wrong_role', () => {
    const executorKey = generateSigningKey('executor-1');
    const ring = keyRing({ policy: parseTrustedKeys(policyKey.trustedKey), executor: parseTrustedKeys(executorKey.trustedKey) });
    const byExecutor = new EventSigner(parseSigningKey(executorKey.signingKey)).headersFor('execute', order);
    expect(refusal(verifyOrder(order, byExecutor, ring, NOW))).toBe('wrong_role');
  });

  // The arguments are signed through their hash: a valid signature alone would let them change.
  it('refuses an order whose arguments no longer match the signed hash as arguments_altered', () => {
    const headers = policySigner.headersFor('execute', order);
    const altered = { ...order, arguments: ARGUMENTS.replace('1 Main Street', '666 Elm Street') };
    const check = verifyOrder(altered, headers, trusted, NOW);
    expect(check).toEqual({ ok: false, reason: 'arguments_altered', detail: expect.any(String) as string });
  });

  it('refuses an order without a signature or without a key id as unsigned', () => {
    const headers = policySigner.headersFor('execute', order);
    expect(refusal(verifyOrder(order, undefined, trusted, NOW))).toBe('unsigned');
    expect(refusal(verifyOrder(order, {}, trusted, NOW))).toBe('unsigned');
    expect(refusal(verifyOrder(order, { [KEY_ID_HEADER]: 'policy-2025-01' }, trusted, NOW))).toBe('unsigned');
    expect(refusal(verifyOrder(order, { [SIGNATURE_HEADER]: headers[SIGNATURE_HEADER] }, trusted, NOW))).toBe('unsigned');
    expect(refusal(verifyOrder(order, { ...headers, [SIGNATURE_HEADER]: '' }, trusted, NOW))).toBe('unsigned');
  });

  // Decoded into a plain object, a hostile record's headers could bring inherited names along.
  it('reads only headers the record itself carries', () => {
    const inherited = Object.create(policySigner.headersFor('execute', order)) as SignedHeaders;
    expect(refusal(verifyOrder(order, inherited, trusted, NOW))).toBe('unsigned');
  });

  it('refuses an order signed under a key id it does not trust as unknown_key', () => {
    const stranger = new EventSigner(parseSigningKey(generateSigningKey('stranger').signingKey));
    const check = verifyOrder(order, stranger.headersFor('execute', order), trusted, NOW);
    expect(check).toEqual({ ok: false, reason: 'unknown_key', detail: 'key id "stranger" is not trusted' });
  });

  it('refuses a signature by another key under a trusted key id as bad_signature', () => {
    const impostor = new EventSigner(parseSigningKey(generateSigningKey('policy-2025-01').signingKey));
    expect(impostor.keyId).toBe('policy-2025-01');
    expect(refusal(verifyOrder(order, impostor.headersFor('execute', order), trusted, NOW))).toBe('bad_signature');
  });

  it('refuses a garbled signature as bad_signature without throwing', () => {
    const good = policySigner.headersFor('execute', order)[SIGNATURE_HEADER] ?? '';
    const garbled = [
      'not base64 at all!',
      good.slice(0, -4),
      `${good.slice(0, 40)}*${good.slice(41)}`,
      Buffer.alloc(63).toString('base64'),
      Buffer.alloc(65).toString('base64'),
      Buffer.alloc(64).toString('base64'),
      `${good}AAAA`,
    ];
    for (const signature of garbled) {
      const check = verifyOrder(order, { [SIGNATURE_HEADER]: signature, [KEY_ID_HEADER]: 'policy-2025-01' }, trusted, NOW);
      expect(refusal(check), signature).toBe('bad_signature');
    }
  });

  it('refuses an order past its deadline as expired, and only then', () => {
    const headers = policySigner.headersFor('execute', order);
    const deadline = order.deadline_at ?? 0;
    expect(verifyOrder(order, headers, trusted, deadline + 1)).toEqual({
      ok: false,
      reason: 'expired',
      detail: `deadline_at ${deadline} passed 1 ms ago`,
    });
    expect(verifyOrder(order, headers, trusted, deadline).ok).toBe(true);
    const open = { ...order, deadline_at: null };
    expect(verifyOrder(open, policySigner.headersFor('execute', open), trusted, Number.MAX_SAFE_INTEGER).ok).toBe(true);
  });

  // Expiry is checked after the signature: a forged order is reported as forged, not as late.
  it('reports a forged expired order as bad_signature', () => {
    const headers = policySigner.headersFor('execute', order);
    const forged = { ...order, tenant: 'globex' };
    expect(refusal(verifyOrder(forged, headers, trusted, (order.deadline_at ?? 0) + 1))).toBe('bad_signature');
  });

  it('accepts orders from both keys during a rotation, and refuses the old key once it is dropped', () => {
    const oldKey = generateSigningKey('policy-old');
    const newKey = generateSigningKey('policy-new');
    const byOld = new EventSigner(parseSigningKey(oldKey.signingKey)).headersFor('execute', order);
    const byNew = new EventSigner(parseSigningKey(newKey.signingKey)).headersFor('execute', order);

    const during = keyRing({ policy: parseTrustedKeys(`${oldKey.trustedKey},${newKey.trustedKey}`) });
    expect(verifyOrder(order, byOld, during, NOW)).toEqual({ ok: true, keyId: 'policy-old', role: 'policy' });
    expect(verifyOrder(order, byNew, during, NOW)).toEqual({ ok: true, keyId: 'policy-new', role: 'policy' });

    const after = keyRing({ policy: parseTrustedKeys(newKey.trustedKey) });
    expect(refusal(verifyOrder(order, byOld, after, NOW))).toBe('unknown_key');
    expect(verifyOrder(order, byNew, after, NOW)).toEqual({ ok: true, keyId: 'policy-new', role: 'policy' });
  });

  it('takes header values as a consumer gets them: Buffer, string or array', () => {
    const headers = policySigner.headersFor('execute', order);
    const signature = headers[SIGNATURE_HEADER] ?? '';
    const keyId = headers[KEY_ID_HEADER] ?? '';
    const shapes: Record<string, SignedHeaders> = {
      buffers: { [SIGNATURE_HEADER]: Buffer.from(signature), [KEY_ID_HEADER]: Buffer.from(keyId) },
      strings: { [SIGNATURE_HEADER]: signature, [KEY_ID_HEADER]: keyId },
      arrays: { [SIGNATURE_HEADER]: [Buffer.from(signature)], [KEY_ID_HEADER]: [keyId] },
      'repeated identical values': {
        [SIGNATURE_HEADER]: [signature, Buffer.from(signature)],
        [KEY_ID_HEADER]: [Buffer.from(keyId), keyId],
      },
      'other headers beside': { ...headers, traceparent: Buffer.from('00-abc-def-01'), 'x-empty': undefined },
    };
    for (const [shape, given] of Object.entries(shapes)) {
      expect(verifyOrder(order, given, trusted, NOW), shape).toEqual({ ok: true, keyId: 'policy-2025-01', role: 'policy' });
    }
  });

  // Two different values under one header name: picking either would let a record choose.
  it('refuses repeated headers with different values', () => {
    const headers = policySigner.headersFor('execute', order);
    const other = new EventSigner(parseSigningKey(approvalKey.signingKey)).headersFor('execute', order);
    const twoSignatures = { ...headers, [SIGNATURE_HEADER]: [headers[SIGNATURE_HEADER] ?? '', other[SIGNATURE_HEADER] ?? ''] };
    const twoKeyIds = { ...headers, [KEY_ID_HEADER]: [headers[KEY_ID_HEADER] ?? '', other[KEY_ID_HEADER] ?? ''] };
    expect(refusal(verifyOrder(order, twoSignatures, trusted, NOW))).toBe('bad_signature');
    expect(refusal(verifyOrder(order, twoKeyIds, trusted, NOW))).toBe('unknown_key');
  });

  it('refuses an order with no canonical form as bad_signature without throwing', () => {
    const broken = { ...order, issued_at: Number.NaN };
    expect(refusal(verifyOrder(broken, policySigner.headersFor('execute', order), trusted, NOW))).toBe('bad_signature');
  });
});

describe('key texts', () => {
  function keyMaterial(text: string): string {
    return text.slice(text.indexOf(':') + 1);
  }

  function parseError(parse: () => unknown): SigningKeyError {
    try {
      parse();
    } catch (error) {
      if (error instanceof SigningKeyError) return error;
      throw error;
    }
    throw new Error('expected a SigningKeyError');
  }

  it('round-trips generated keys: the signing key signs what the trusted key verifies', () => {
    const key = generateSigningKey('local-dev');
    expect(key.signingKey).toMatch(/^local-dev:[A-Za-z0-9+/]+=*$/);
    expect(key.trustedKey).toMatch(/^local-dev:[A-Za-z0-9+/]+=*$/);
    const signing = parseSigningKey(`  ${key.signingKey}\n`);
    expect(signing.keyId).toBe('local-dev');
    const headers = new EventSigner(signing).headersFor('execute', order);
    expect(verifyOrder(order, headers, keyRing({ approval: parseTrustedKeys(key.trustedKey) }), NOW).ok).toBe(true);
  });

  it('ignores blank entries in the trusted list and requires at least one key', () => {
    const keys = parseTrustedKeys(` , ${policyKey.trustedKey} ,, ${approvalKey.trustedKey},\n`);
    expect([...keys.keys()]).toEqual(['policy-2025-01', 'approval-2025-01']);
    expect(parseError(() => parseTrustedKeys(' , ,')).message).toMatch(/at least one/);
    expect(parseError(() => parseTrustedKeys('')).message).toMatch(/at least one/);
  });

  it('refuses a malformed key id, without echoing it', () => {
    const material = keyMaterial(policyKey.signingKey);
    for (const keyId of ['Policy', '', '-policy', 'policy key', 'p'.repeat(65)]) {
      const error = parseError(() => parseSigningKey(`${keyId}:${material}`));
      expect(error.message).toMatch(/key id must match/);
      expect(error.message).not.toContain(material);
      if (keyId !== '') expect(error.message).not.toContain(keyId);
    }
    expect(parseError(() => generateSigningKey('Not An Id')).message).toMatch(/key id must match/);
    expect(() => parseTrustedKeys(`ok-id:${keyMaterial(policyKey.trustedKey)},BAD:${keyMaterial(approvalKey.trustedKey)}`)).toThrow(
      /trusted key 2: the key id/,
    );
  });

  it('refuses a text without a key id, without echoing it', () => {
    const material = keyMaterial(policyKey.signingKey);
    const error = parseError(() => parseSigningKey(material));
    expect(error.message).toMatch(/expected <keyId>:<base64 DER key>/);
    expect(error.message).not.toContain(material);
  });

  it('refuses bad base64, without echoing it', () => {
    const material = keyMaterial(policyKey.signingKey);
    for (const broken of [`${material.slice(0, 20)}!${material.slice(21)}`, material.slice(0, -3), '']) {
      const error = parseError(() => parseSigningKey(`policy:${broken}`));
      expect(error.message).toBe('signing key (key id "policy"): the key is not valid base64');
    }
    const trustedMaterial = keyMaterial(policyKey.trustedKey);
    expect(parseError(() => parseTrustedKeys(`policy:${trustedMaterial.slice(1)}`)).message).toBe(
      'trusted key 1 (key id "policy"): the key is not valid base64',
    );
  });

  it('refuses a public key given as a signing key, and a private key given as a trusted key', () => {
    const asPrivate = parseError(() => parseSigningKey(policyKey.trustedKey));
    expect(asPrivate.message).toBe('signing key (key id "policy-2025-01"): the key is not a PKCS#8 DER private key');
    expect(asPrivate.message).not.toContain(keyMaterial(policyKey.trustedKey));
    const asPublic = parseError(() => parseTrustedKeys(policyKey.signingKey));
    expect(asPublic.message).toBe('trusted key 1 (key id "policy-2025-01"): the key is not an SPKI DER public key');
    expect(asPublic.message).not.toContain(keyMaterial(policyKey.signingKey));
  });

  it('refuses keys of another algorithm', () => {
    const { privateKey, publicKey } = generateKeyPairSync('x25519');
    const privateText = `other:${privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64')}`;
    const publicText = `other:${publicKey.export({ format: 'der', type: 'spki' }).toString('base64')}`;
    expect(parseError(() => parseSigningKey(privateText)).message).toBe('signing key (key id "other"): the key is x25519, not Ed25519');
    expect(parseError(() => parseTrustedKeys(publicText)).message).toBe('trusted key 1 (key id "other"): the key is x25519, not Ed25519');
  });

  it('refuses a key id listed for two roles: each service signs with a key of its own', () => {
    const shared = parseTrustedKeys(policyKey.trustedKey);
    expect(() => keyRing({ policy: shared, approval: shared })).toThrow(
      'key id "policy-2025-01" is listed for both the policy and the approval service; each service signs with a key of its own',
    );
  });

  it('refuses one key listed for two roles under different ids', () => {
    const material = policyKey.trustedKey.slice(policyKey.trustedKey.indexOf(':') + 1);
    expect(() =>
      keyRing({ policy: parseTrustedKeys(policyKey.trustedKey), approval: parseTrustedKeys(`approval-copy:${material}`) }),
    ).toThrow('key id "approval-copy" (approval) is the same key as "policy-2025-01" (policy); each service signs with a key of its own');
  });

  it('refuses a service whose own signing key readers would take for another role’s', () => {
    const ring = keyRing({ policy: parseTrustedKeys(policyKey.trustedKey), approval: parseTrustedKeys(approvalKey.trustedKey) });
    expect(() => assertSignsAs(ring, parseSigningKey(policyKey.signingKey), 'approval')).toThrow(
      /this approval service's signing key is listed as the policy service's key "policy-2025-01"/,
    );
    expect(() => assertSignsAs(ring, parseSigningKey(approvalKey.signingKey), 'approval')).not.toThrow();
  });

  it('refuses a key id listed twice in the trusted keys', () => {
    const again = generateSigningKey('policy-2025-01');
    const error = parseError(() => parseTrustedKeys(`${policyKey.trustedKey},${approvalKey.trustedKey},${again.trustedKey}`));
    expect(error.message).toBe('trusted key 3: key id "policy-2025-01" is listed twice');
    expect(error.message).not.toContain(keyMaterial(again.trustedKey));
    expect(error).toMatchObject({ name: 'SigningKeyError', code: 'SIGNING_KEY_INVALID', retryable: false });
  });
});
