import { describe, expect, it } from 'vitest';
import { sha256Hex } from '@gatehouse/contracts';
import {
  BATCH_PROOF_HEADER,
  EventSigner,
  generateSigningKey,
  KEY_ID_HEADER,
  keyRing,
  MAX_BATCH_LEAVES,
  parseSigningKey,
  parseTrustedKeys,
  payloadFor,
  SIGNATURE_HEADER,
  verifyOrder,
  verifyResult,
} from '@gatehouse/events';
import type { ExecutionOrder, SignatureCheck, SignedHeaders, ToolResult } from '@gatehouse/events';
import { REPLY_PARTITION_HEADER } from '@gatehouse/telemetry';

const NOW = 1_700_000_100_000;
const ARGUMENTS = '{"customer_id":"cus_1"}';

function orderFor(n: number): ExecutionOrder {
  return {
    schema_version: 1,
    order_id: `ord-${n}`,
    command_id: `cmd-${n}`,
    run_id: 'run-1',
    tenant: 'acme',
    principal: 'agent:support-bot',
    environment: 'prod',
    tool: 'get_customer.v1',
    effect: 'read',
    arguments: ARGUMENTS,
    arguments_sha256: sha256Hex(ARGUMENTS),
    proposal_id: null,
    approval: null,
    idempotency_key: null,
    deadline_at: NOW + 60_000,
    issued_at: NOW - 1_000,
  };
}

function resultFor(n: number): ToolResult {
  return {
    schema_version: 1,
    command_id: `cmd-${n}`,
    run_id: 'run-1',
    tenant: 'acme',
    tool: 'get_customer.v1',
    status: 'ok',
    operation_id: `op_${n}`,
    result: JSON.stringify({ customer_id: 'cus_1', n }),
    error: null,
    pending: null,
    arguments_sha256: sha256Hex(ARGUMENTS),
    completed_at: NOW,
    duration_ms: 3,
  };
}

const policyKey = generateSigningKey('policy-2026-01');
const executorKey = generateSigningKey('executor-2026-01');
const policySigner = new EventSigner(parseSigningKey(policyKey.signingKey));
const executorSigner = new EventSigner(parseSigningKey(executorKey.signingKey));
const ring = () => keyRing({ policy: parseTrustedKeys(policyKey.trustedKey), executor: parseTrustedKeys(executorKey.trustedKey) });

const refusal = (check: SignatureCheck): string => (check.ok ? 'ok' : check.reason);

/** Orders as the policy service publishes them in one produce request: each with its reply partition. */
function signedOrders(count: number, signer = policySigner): { orders: ExecutionOrder[]; headers: Record<string, string>[] } {
  const orders = Array.from({ length: count }, (_, i) => orderFor(i));
  const routed = orders.map((_, i) => ({ [REPLY_PARTITION_HEADER]: String(i % 3) }));
  const signatures = signer.headersForBatch(orders.map((o, i) => payloadFor('execute', o, routed[i]) as Buffer));
  return { orders, headers: routed.map((h, i) => ({ ...h, ...signatures[i] })) };
}

describe('orders signed as a batch', () => {
  it('signs a batch once and every order of it verifies, each with its own path', () => {
    const trusted = ring();
    const { orders, headers } = signedOrders(13);
    expect(new Set(headers.map((h) => h[SIGNATURE_HEADER])).size).toBe(1);
    expect(new Set(headers.map((h) => h[BATCH_PROOF_HEADER])).size).toBe(13);
    orders.forEach((order, i) =>
      expect(verifyOrder(order, headers[i], trusted, NOW)).toEqual({ ok: true, keyId: 'policy-2026-01', role: 'policy' }),
    );
  });

  it('signs one order alone, with no path, as a single publish always was', () => {
    const { orders, headers } = signedOrders(1);
    expect(headers[0]).not.toHaveProperty(BATCH_PROOF_HEADER);
    expect(headers[0]).toEqual(
      expect.objectContaining(policySigner.headersFor('execute', orders[0] as ExecutionOrder, { [REPLY_PARTITION_HEADER]: '0' })),
    );
    expect(verifyOrder(orders[0] as ExecutionOrder, headers[0], ring(), NOW)).toMatchObject({ ok: true });
  });

  it(`signs a batch of more than ${MAX_BATCH_LEAVES} orders once per ${MAX_BATCH_LEAVES}, and every one verifies`, () => {
    const trusted = ring();
    const { orders, headers } = signedOrders(MAX_BATCH_LEAVES * 2 + 1);
    expect(new Set(headers.map((h) => h[SIGNATURE_HEADER])).size).toBe(3);
    // The one left over is signed alone.
    expect(headers.at(-1)).not.toHaveProperty(BATCH_PROOF_HEADER);
    expect(orders.filter((order, i) => verifyOrder(order, headers[i], trusted, NOW).ok)).toHaveLength(orders.length);
  });

  it('refuses an order altered after signing, even once its batch was verified', () => {
    const trusted = ring();
    const { orders, headers } = signedOrders(8);
    expect(verifyOrder(orders[0] as ExecutionOrder, headers[0], trusted, NOW).ok).toBe(true);
    const altered = { ...(orders[1] as ExecutionOrder), tenant: 'globex' };
    expect(refusal(verifyOrder(altered, headers[1], trusted, NOW))).toBe('bad_signature');
  });

  it("refuses an order carrying another order's path, or its own path under another batch's signature", () => {
    const trusted = ring();
    const first = signedOrders(8);
    const second = signedOrders(5);
    first.orders.forEach((order, i) => expect(verifyOrder(order, first.headers[i], trusted, NOW).ok).toBe(true));
    const order = first.orders[2] as ExecutionOrder;
    const own = first.headers[2] as Record<string, string>;
    expect(
      refusal(verifyOrder(order, { ...own, [BATCH_PROOF_HEADER]: first.headers[3]?.[BATCH_PROOF_HEADER] as string }, trusted, NOW)),
    ).toBe('bad_signature');
    expect(refusal(verifyOrder(order, { ...own, [SIGNATURE_HEADER]: second.headers[2]?.[SIGNATURE_HEADER] as string }, trusted, NOW))).toBe(
      'bad_signature',
    );
  });

  it('refuses a re-addressed order of a batch: its reply partition is in its leaf', () => {
    const { orders, headers } = signedOrders(4);
    expect(refusal(verifyOrder(orders[1] as ExecutionOrder, { ...headers[1], [REPLY_PARTITION_HEADER]: '7' }, ring(), NOW))).toBe(
      'bad_signature',
    );
  });

  it('refuses a batch signature presented without its path, and a single signature presented with one', () => {
    const trusted = ring();
    const batch = signedOrders(4);
    const order = batch.orders[0] as ExecutionOrder;
    const withoutPath = { ...batch.headers[0] } as Record<string, string>;
    delete withoutPath[BATCH_PROOF_HEADER];
    expect(refusal(verifyOrder(order, withoutPath, trusted, NOW))).toBe('bad_signature');
    const alone = policySigner.headersFor('execute', order, { [REPLY_PARTITION_HEADER]: '0' });
    expect(
      refusal(
        verifyOrder(
          order,
          { [REPLY_PARTITION_HEADER]: '0', ...alone, [BATCH_PROOF_HEADER]: batch.headers[0]?.[BATCH_PROOF_HEADER] as string },
          trusted,
          NOW,
        ),
      ),
    ).toBe('bad_signature');
  });

  it('refuses paths that are not ones a signer writes, and two differing paths on one record', () => {
    const trusted = ring();
    const { orders, headers } = signedOrders(8);
    const order = orders[5] as ExecutionOrder;
    const own = headers[5] as Record<string, string>;
    const proof = own[BATCH_PROOF_HEADER] as string;
    const [sides = '', hashes = ''] = proof.split('.');
    const bytes = Buffer.from(hashes, 'base64');
    const forged = [
      '',
      '.',
      `${sides}`,
      `${sides.slice(1)}.${bytes.subarray(32).toString('base64')}`,
      `${sides}l.${Buffer.concat([bytes, bytes.subarray(0, 32)]).toString('base64')}`,
      `${'x'.repeat(sides.length)}.${hashes}`,
      `${sides.replaceAll('l', 'R')}.${hashes}`,
      `${sides}.${hashes}=`,
      `${'lrlrlrl'}.${Buffer.alloc(7 * 32).toString('base64')}`,
      `${sides
        .split('')
        .map((s) => (s === 'l' ? 'r' : 'l'))
        .join('')}.${hashes}`,
    ];
    for (const path of forged)
      expect({ path, check: refusal(verifyOrder(order, { ...own, [BATCH_PROOF_HEADER]: path }, trusted, NOW)) }).toEqual({
        path,
        check: 'bad_signature',
      });
    const twice: SignedHeaders = {
      ...own,
      [BATCH_PROOF_HEADER]: [Buffer.from(proof), Buffer.from(headers[4]?.[BATCH_PROOF_HEADER] as string)],
    };
    expect(refusal(verifyOrder(order, twice, trusted, NOW))).toBe('bad_signature');
    expect(verifyOrder(order, own, trusted, NOW).ok).toBe(true);
  });

  it('refuses a batch signed by a key of a role that may not order, though its signature is valid', () => {
    const { orders, headers } = signedOrders(4, executorSigner);
    expect(refusal(verifyOrder(orders[0] as ExecutionOrder, headers[0], ring(), NOW))).toBe('wrong_role');
  });

  it('trusts a verified batch only within the key ring it was verified against', () => {
    const { orders, headers } = signedOrders(4);
    expect(verifyOrder(orders[0] as ExecutionOrder, headers[0], ring(), NOW).ok).toBe(true);
    // Another ring names the same key id, but for another key: the batch is checked again, and fails.
    const other = generateSigningKey('policy-2026-01');
    const stranger = keyRing({ policy: parseTrustedKeys(other.trustedKey) });
    expect(refusal(verifyOrder(orders[1] as ExecutionOrder, headers[1], stranger, NOW))).toBe('bad_signature');
  });
});

describe('results signed as a batch', () => {
  it('verifies every result of an executor batch, and refuses one whose status was flipped', () => {
    const trusted = ring();
    const results = Array.from({ length: 6 }, (_, i) => resultFor(i));
    const headers = executorSigner.headersForBatch(results.map((r) => payloadFor('results', r) as Buffer));
    results.forEach((result, i) => expect(verifyResult(result, headers[i], trusted)).toMatchObject({ ok: true, role: 'executor' }));
    const flipped: ToolResult = { ...(results[2] as ToolResult), status: 'error' };
    expect(refusal(verifyResult(flipped, headers[2], trusted))).toBe('bad_signature');
    expect(headers[0]?.[KEY_ID_HEADER]).toBe('executor-2026-01');
  });
});
