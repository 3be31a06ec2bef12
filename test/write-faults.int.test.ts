import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventPublisher, KafkaAdmin, verifyResult } from '@gatehouse/events';
import type { OperatorHandoff, ToolResult } from '@gatehouse/events';
import { ClaimLedger, ProposalStore } from '@gatehouse/state';
import type { Run } from '@gatehouse/state';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import { pollUntil } from './support/poll.js';
import { eventually } from './support/stack.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { PEOPLE, tokensOf } from './support/identity.js';
import { sandboxAllowsWrites } from './support/test-policy.js';
import { approvedOrder, armFaults, collect, commit, currentVersion, preview, shippingLine1 } from './support/writes.js';
import { signedHeaders, TEST_KEY_RING } from './support/signing.js';

// The seeds' fault list: the service commits and the answer is lost or mangled, the status query is
// down, two proposals race for one version. In each, PostgreSQL is the truth the agent's answer must match.
describe('writes happen once and are reported honestly under faults', () => {
  let g: Gatehouse;
  let run: Run;
  let operator: Awaited<ReturnType<typeof collect<'operator'>>>;
  let results: Awaited<ReturnType<typeof collect<'results'>>>;

  beforeAll(async () => {
    const catalog = customerSupportCatalog();
    g = await startGatehouse('faults', { faults: true, operators: true, catalog, table: sandboxAllowsWrites(catalog) });
    run = await g.createRun('support-agent');
    operator = await collect(g, 'operator');
    results = await collect(g, 'results');
  });
  afterAll(async () => {
    await operator.stop();
    await results.stop();
    await g.stop();
  });

  it('reports the committed result when the connection drops after the commit', async () => {
    const before = await currentVersion(g);
    const proposalId = await preview(g, run, '1 Dropped Lane');
    await armFaults(g, { nextWrites: ['drop-after-commit'] });
    const result = await commit(g, run, proposalId);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.result).toMatchObject({
      customer_id: 'C-1842',
      previous_version: before,
      new_version: before + 1,
      changed_fields: ['shipping_address'],
    });
    expect(await currentVersion(g)).toBe(before + 1);
    expect(await shippingLine1(g)).toBe('1 Dropped Lane');
    expect((await new ClaimLedger(g.redis, g.keys).get(`${run.run_id}:${proposalId}:commit`))?.state).toBe('succeeded');
  });

  it('reports the committed result when the success body is malformed', async () => {
    const before = await currentVersion(g);
    const proposalId = await preview(g, run, '2 Garbled Road');
    await armFaults(g, { nextWrites: ['malformed-success'] });
    const result = await commit(g, run, proposalId);
    expect(result.ok && result.result).toMatchObject({ new_version: before + 1 });
    expect(await currentVersion(g)).toBe(before + 1);
  });

  it('answers OUTCOME_UNKNOWN and hands the write to an operator when the status query is down too', async () => {
    const before = await currentVersion(g);
    const proposalId = await preview(g, run, '3 Unknown Street');
    await armFaults(g, { nextWrites: ['drop-after-commit'], statusDown: true });
    let unknownCommand = '';
    try {
      const result = await commit(g, run, proposalId);
      unknownCommand = result.commandId;
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.status).toBe('unknown');
      expect(result.error).toMatchObject({ code: 'OUTCOME_UNKNOWN', retryable: false });
      const handoff = await eventually(
        () => operator.events.find((h: OperatorHandoff) => h.command_id === result.commandId),
        10_000,
        'the operator handoff',
      );
      expect(handoff).toMatchObject({
        reason: 'status_unavailable',
        idempotency_key: `${run.run_id}:${proposalId}:commit`,
        tool: 'commit_address_change.v2',
      });
    } finally {
      await armFaults(g, { statusDown: false });
    }
    // The write did commit: the unknown was honest, not a failure in disguise.
    expect(await currentVersion(g)).toBe(before + 1);
    const key = `${run.run_id}:${proposalId}:commit`;
    expect((await new ClaimLedger(g.redis, g.keys).get(key))?.state).toBe('unknown');

    // An operator establishes it from the system of record and resolves it; the agent gets the final result.
    const { rows } = await g.customers.db.query<{ response: Record<string, unknown> }>(
      `select response from ${g.customers.t.idempotencyKeys} where key = $1`,
      [key],
    );
    const evidence = rows[0]?.response;
    expect(evidence).toMatchObject({ new_version: before + 1 });
    const control = g.policies[0]?.url ?? '';
    // As a person with the operator role, signed in at the IdP: the resolution is recorded under them.
    const operatorToken = (await tokensOf(PEOPLE.ops)).access_token;
    const resolveAs = (body: Record<string, unknown>): Promise<Response> =>
      fetch(`${control}/operations/${encodeURIComponent(key)}/resolve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const resolution = {
      state: 'succeeded',
      evidence: 'customers idempotency row shows the commit',
      result: evidence,
    };
    const resolve = await resolveAs(resolution);
    expect(resolve.status).toBe(200);
    const final = await eventually(
      () => results.events.find((r: ToolResult) => r.command_id === unknownCommand && r.status === 'ok'),
      10_000,
      'the final result',
    );
    expect(JSON.parse(final.result ?? '{}')).toMatchObject({ previous_version: before, new_version: before + 1 });
    // The operator's answer is signed by the policy service; an altered copy is not.
    expect(verifyResult(final, results.headersOf(final), TEST_KEY_RING)).toMatchObject({ ok: true });
    expect(verifyResult({ ...final, result: '{"new_version":0}' }, results.headersOf(final), TEST_KEY_RING)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect((await new ClaimLedger(g.redis, g.keys).get(key))?.state).toBe('succeeded');
    const twice = await resolveAs({ state: 'failed', evidence: 'second opinion' });
    expect(twice.status).toBe(409);
    // The same resolution again, once its answer is out, publishes nothing more either.
    expect((await resolveAs(resolution)).status).toBe(409);
    expect(results.events.filter((r: ToolResult) => r.command_id === unknownCommand && r.status === 'ok')).toHaveLength(1);
    // Its answer went out, but the mark that it did is lost (a failover, a crash between the two): the
    // same resolution again completes (200), and the results topic shows its answer out, so nothing
    // more is published on it (the route answers only once what it publishes is acknowledged).
    await g.redis.hdel(g.keys.idempotency(key), 'published');
    const admin = await KafkaAdmin.connect(g.kafka);
    try {
      const end = async (): Promise<bigint> => (await admin.topicOffsets(g.topics.results)).reduce((sum, p) => sum + BigInt(p.high), 0n);
      const published = await end();
      expect((await resolveAs(resolution)).status).toBe(200);
      expect(await end()).toBe(published);
    } finally {
      await admin.close();
    }
  });

  it('lets exactly one of two proposals against one version win; the other is a VERSION_CONFLICT and stays unconsumed', async () => {
    const before = await currentVersion(g);
    const first = await preview(g, run, '4 Race Street');
    const second = await preview(g, run, '5 Race Street');
    const outcomes = await Promise.all([commit(g, run, first), commit(g, run, second)]);
    const won = outcomes.filter((o) => o.ok);
    const lost = outcomes.filter((o) => !o.ok);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    const loser = lost[0];
    if (loser === undefined || loser.ok) return;
    expect(loser.error).toMatchObject({
      code: 'VERSION_CONFLICT',
      retryable: false,
      field: '/expected_version',
      next: 'preview_address_change.v1',
    });
    expect(await currentVersion(g)).toBe(before + 1);
    const loserProposal = outcomes[0]?.ok === true ? second : first;
    expect((await new ProposalStore(g.redis, g.keys).get(loserProposal))?.state).toBe('open');
  });

  it('applies one write for the same ExecutionOrder delivered five times, and answers its command once', async () => {
    const before = await currentVersion(g);
    const order = await approvedOrder(
      g,
      run,
      { customer_id: 'C-1842', expected_version: before, destination: { kind: 'new', line1: '6 Echo Road', city: 'York', country: 'GB' } },
      before,
    );
    const copies = async (): Promise<number> => {
      const text = await (await fetch(`${g.executors[0]?.url ?? ''}/metrics`)).text();
      return Number(/^gatehouse_duplicate_orders_total\{reason="answered"\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const copiesBefore = await copies();
    const publisher = await EventPublisher.connect(g.kafka, g.serde);
    try {
      await publisher.publishMany(
        'execute',
        Array.from({ length: 5 }, () => ({ key: order.tenant, event: order, headers: signedHeaders(order) })),
      );
    } finally {
      await publisher.disconnect();
    }
    // Every copy is judged: four find the command answered and publish nothing.
    await pollUntil(async () => ((await copies()) >= copiesBefore + 4 ? true : undefined), 20_000, 'the four copies');
    const answers = await eventually(
      () => {
        const mine = results.events.filter((r: ToolResult) => r.command_id === order.command_id);
        return mine.length > 0 ? mine : undefined;
      },
      20_000,
      'the answer',
    );
    expect(answers.map((a) => a.status)).toEqual(['ok']);
    expect(await copies()).toBe(copiesBefore + 4);
    expect(await currentVersion(g)).toBe(before + 1);

    // The same key with other arguments is refused, and nothing is written.
    const forged = await approvedOrder(
      g,
      run,
      {
        customer_id: 'C-1842',
        expected_version: before + 1,
        destination: { kind: 'new', line1: '7 Forged Way', city: 'York', country: 'GB' },
      },
      before + 1,
    );
    const reuse = { ...forged, idempotency_key: order.idempotency_key };
    const again = await EventPublisher.connect(g.kafka, g.serde);
    try {
      await again.publish('execute', reuse.tenant, reuse, signedHeaders(reuse));
    } finally {
      await again.disconnect();
    }
    const refused = await eventually(
      () => results.events.find((r: ToolResult) => r.command_id === reuse.command_id),
      20_000,
      'the refusal',
    );
    expect(refused.error?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await currentVersion(g)).toBe(before + 1);
    expect(await shippingLine1(g)).toBe('6 Echo Road');
  });
});
