import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalArguments } from '@gatehouse/contracts';
import { EventPublisher, generateSigningKey, KEY_ID_HEADER, OrderSigner, parseSigningKey, SIGNATURE_HEADER } from '@gatehouse/events';
import type { ExecutionOrder } from '@gatehouse/events';
import type { Run } from '@gatehouse/state';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { signedHeaders } from './support/signing.js';
import { eventually } from './support/stack.js';
import { approvedOrder, collect, currentVersion } from './support/writes.js';

// Whoever can write to gatehouse.execute is not thereby trusted: only orders the policy or approval
// service signed run. Each forgery below is published straight on the topic, as a misconfigured
// runtime or a leaked client credential could; each is refused, runs nothing and changes no row.
describe('the executor runs only orders a trusted key signed', () => {
  let g: Gatehouse;
  let run: Run;
  let results: Awaited<ReturnType<typeof collect<'results'>>>;
  const stranger = new OrderSigner(parseSigningKey(generateSigningKey('stranger').signingKey));

  beforeAll(async () => {
    g = await startGatehouse('signed', { executors: 1 });
    run = await g.createRun('support-agent');
    results = await collect(g, 'results');
  });
  afterAll(async () => {
    await results?.stop();
    await g?.stop();
  });

  /** A read of another tenant's customer, the way a forger would write it. */
  function foreignRead(): ExecutionOrder {
    const { canonical, sha256 } = canonicalArguments({ customer_id: 'C-1842' });
    const now = Date.now();
    return {
      schema_version: 1,
      order_id: randomUUID(),
      command_id: `forged-${randomUUID()}`,
      run_id: `run_${randomUUID()}`,
      tenant: 'globex',
      principal: 'agent:intruder',
      environment: 'production',
      tool: 'get_customer.v1',
      effect: 'read',
      arguments: canonical,
      arguments_sha256: sha256,
      proposal_id: null,
      approval: null,
      idempotency_key: null,
      deadline_at: now + 60_000,
      issued_at: now,
    };
  }

  async function publish(order: ExecutionOrder, headers: Record<string, string> | undefined): Promise<void> {
    const publisher = await EventPublisher.connect(g.kafka, g.serde);
    try {
      await publisher.publish('execute', order.tenant, order, headers);
    } finally {
      await publisher.disconnect();
    }
  }

  it('refuses every forgery with ORDER_NOT_TRUSTED, counts it by reason, runs nothing and changes no row', async () => {
    const before = await currentVersion(g);
    const write = await approvedOrder(g, run, { customer_id: 'C-1842', expected_version: before, destination: { kind: 'new', line1: '1 Forged Road', city: 'York', country: 'GB' } }, before);
    const reSigned = { ...write, command_id: `forged-${randomUUID()}`, tenant: 'globex' };
    const otherArgs = canonicalArguments({ customer_id: 'C-1842', expected_version: before, destination: { kind: 'new', line1: '2 Swapped Street', city: 'York', country: 'GB' } });
    const cases: { name: string; order: ExecutionOrder; headers: Record<string, string> | undefined; reason: string }[] = [
      { name: 'an unsigned read of another tenant', order: foreignRead(), headers: undefined, reason: 'unsigned' },
      { name: 'an unsigned write with a real approval', order: { ...write, command_id: `forged-${randomUUID()}` }, headers: undefined, reason: 'unsigned' },
      { name: 'a read signed by a key nobody trusts', order: foreignRead(), headers: undefined, reason: 'unknown_key' },
      { name: 'a signed write re-addressed to another tenant', order: reSigned, headers: signedHeaders(write), reason: 'bad_signature' },
      { name: 'a signed write whose arguments were swapped', order: { ...write, command_id: `forged-${randomUUID()}`, arguments: otherArgs.canonical }, headers: undefined, reason: 'arguments_altered' },
      { name: 'a garbled signature under a trusted key id', order: foreignRead(), headers: undefined, reason: 'bad_signature' },
    ];
    const first = cases[2];
    if (first !== undefined) first.headers = stranger.headersFor(first.order);
    const altered = cases[4];
    // Signed as issued, then its arguments swapped on the way: the signature still holds, the hash does not.
    if (altered !== undefined) altered.headers = signedHeaders({ ...altered.order, arguments: write.arguments });
    const garbled = cases[5];
    if (garbled !== undefined) garbled.headers = { ...signedHeaders(garbled.order), [SIGNATURE_HEADER]: Buffer.alloc(64, 7).toString('base64') };
    expect(cases.every((c) => c.headers === undefined || c.headers[KEY_ID_HEADER] !== undefined)).toBe(true);

    for (const c of cases) await publish(c.order, c.headers);
    for (const c of cases) {
      const answer = await eventually(() => results.events.find((r) => r.command_id === c.order.command_id), 20_000, `the answer to ${c.name}`);
      expect(answer.status, c.name).toBe('error');
      expect(answer.error, c.name).toMatchObject({ code: 'ORDER_NOT_TRUSTED', retryable: false });
      expect(JSON.parse(answer.error?.details ?? '{}'), c.name).toEqual({ reason: c.reason });
      expect(answer.result, c.name).toBeNull();
    }
    expect(await currentVersion(g)).toBe(before);

    const metrics = await (await fetch(`${g.executors[0]?.url ?? ''}/metrics`)).text();
    const count = (reason: string): number => Number(new RegExp(`^gatehouse_untrusted_orders_total\\{reason="${reason}"\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0);
    expect({ unsigned: count('unsigned'), unknown_key: count('unknown_key'), bad_signature: count('bad_signature'), arguments_altered: count('arguments_altered') }).toEqual({
      unsigned: 2,
      unknown_key: 1,
      bad_signature: 2,
      arguments_altered: 1,
    });

    // The same write, signed as the approval service signs it, runs once.
    await publish(write, signedHeaders(write));
    const ran = await eventually(() => results.events.find((r) => r.command_id === write.command_id), 20_000, 'the signed write');
    expect(ran.status, JSON.stringify(ran.error)).toBe('ok');
    expect(await currentVersion(g)).toBe(before + 1);
  });
});
