import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, implement } from '@gatehouse/contracts';
import type { ToolCommand, ToolResult } from '@gatehouse/events';
import type { Run } from '@gatehouse/state';
import type { Admin, Producer } from 'kafkajs';
import { readCommitted } from './support/committed-records.js';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse, RegisteredRun } from './support/gatehouse.js';
import { awaitGroup, describeGroup, isSpreadOver } from './support/processes.js';
import type { GroupView } from './support/processes.js';
import { recordResults } from './support/results.js';
import type { ResultLog } from './support/results.js';
import { pollUntil } from './support/poll.js';
import { proofFor } from './support/signing.js';
import { eventually } from './support/stack.js';
import { Teardown } from './support/teardown.js';
import { TEST_ROLE, testCatalog } from './support/test-catalog.js';

const LIMIT = 5;
const WINDOW_MS = 60_000;
const PARTITIONS = 3;

const ping = defineTool({
  name: 'ping',
  version: 1,
  description: 'Answers pong for the tenant of the run. Test-only read under a tight per-tenant rate limit.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['seq'],
    properties: { seq: { type: 'integer', minimum: 0, maximum: 1000 } },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['pong', 'tenant'],
    properties: { pong: { type: 'boolean' }, tenant: { type: 'string' } },
  },
  effect: 'read',
  retry: 'never',
  timeoutMs: 2_000,
  rateLimit: { limit: LIMIT, windowMs: WINDOW_MS, per: 'tenant' },
  cancel: 'none',
  maxResultBytes: 1_024,
} as const);

const pingTool = implement(ping, {
  run: (_args, context) => Promise.resolve({ pong: true, tenant: context.tenant }),
});

interface Sent {
  readonly command: ToolCommand;
  readonly partition: number;
}

describe('a per-tenant rate limit shared by two policy instances', () => {
  const teardown = new Teardown();
  let g: Gatehouse;
  let admin: Admin;
  let producer: Producer;
  let results: ResultLog;
  let watch: Awaited<ReturnType<Gatehouse['watchOrders']>>;
  let acmeRuns: RegisteredRun[];
  let globexRun: RegisteredRun;
  /** Each run's key by run id: the commands sent by hand prove their run as the client's do. */
  const runKeys = new Map<string, string>();
  let before: GroupView;
  const acme: Sent[] = [];
  const globex: Sent[] = [];
  const outcomes = new Map<string, ToolResult>();
  let burstStartedAt = 0;
  let burstSettledAt = 0;

  const commandOf = (run: Pick<Run, 'run_id' | 'tenant'>, seq: number, prefix: string): ToolCommand => ({
    schema_version: 1,
    command_id: `${prefix}-${seq}-${randomUUID()}`,
    run_id: run.run_id,
    tenant: run.tenant,
    tool: ping.address,
    arguments: JSON.stringify({ seq }),
    sent_at: Date.now(),
    deadline_at: Date.now() + 30_000,
  });

  // Commands are keyed by tenant, so one tenant's commands normally reach one partition and one
  // instance. Sending them to explicit partitions makes both instances take from the same window.
  const send = async (entries: readonly Sent[]): Promise<void> => {
    await producer.send({
      topic: g.topics.commands,
      acks: -1,
      messages: entries.map((e) => {
        const runKey = runKeys.get(e.command.run_id);
        return {
          key: e.command.tenant,
          partition: e.partition,
          value: g.serde.encode('commands', e.command),
          ...(runKey === undefined ? {} : { headers: proofFor({ run_key: runKey }, e.command) }),
        };
      }),
    });
  };

  /** A command for an unknown run on `partition`, resent until its refusal arrives: that partition is being consumed. */
  const probe = async (partition: number): Promise<void> => {
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const command = commandOf({ run_id: `run_probe_${randomUUID()}`, tenant: 'acme' }, attempt, `probe-${partition}`);
      await send([{ command, partition }]);
      try {
        const answered = await results.waitFor([command.command_id], 3_000);
        expect(answered.get(command.command_id)?.error?.code).toBe('RUN_NOT_FOUND');
        return;
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('timed out')) throw error;
      }
    }
    throw new Error(`partition ${partition} of the commands topic is not being consumed`);
  };

  beforeAll(async () => {
    const { catalog, implementations, roles } = testCatalog([pingTool]);
    g = teardown.add(await startGatehouse('ratelimit', { policies: 2, catalog, implementations, roles, partitions: PARTITIONS }), (x) =>
      x.stop(),
    );
    admin = g.kafka.admin();
    await teardown.add(admin, (a) => a.disconnect()).connect();
    producer = g.kafka.producer({ allowAutoTopicCreation: false });
    await teardown.add(producer, (p) => p.disconnect()).connect();
    results = teardown.add(await recordResults(g), (r) => r.stop());
    watch = teardown.add(await g.watchOrders(), (w) => w.stop());
    acmeRuns = [await g.createRun(TEST_ROLE), await g.createRun(TEST_ROLE), await g.createRun(TEST_ROLE)];
    globexRun = await g.createRun(TEST_ROLE, { tenant: 'globex' });
    for (const run of [...acmeRuns, globexRun]) runKeys.set(run.run_id, run.run_key);

    // Both instances hold partitions and every partition is being consumed before the burst.
    before = await awaitGroup(admin, `${g.label}-policy`, g.topics.commands, (v) => isSpreadOver(v, 2, PARTITIONS), 30_000);
    for (let p = 0; p < PARTITIONS; p += 1) await probe(p);

    for (let i = 0; i < 3 * LIMIT; i += 1) {
      acme.push({ command: commandOf(acmeRuns[i % acmeRuns.length] as RegisteredRun, i, 'acme'), partition: i % PARTITIONS });
    }
    for (let i = 0; i < LIMIT; i += 1) globex.push({ command: commandOf(globexRun, i, 'globex'), partition: i % PARTITIONS });
    burstStartedAt = Date.now();
    await send([...acme, ...globex]);
    const settled = await results.waitFor(
      [...acme, ...globex].map((s) => s.command.command_id),
      30_000,
    );
    burstSettledAt = Date.now();
    for (const [id, result] of settled) outcomes.set(id, result);
  }, 90_000);

  afterAll(() => teardown.run());

  const acmeOutcomes = () => acme.map((s) => outcomes.get(s.command.command_id) as ToolResult);

  it('spreads the burst over both instances, which keep their partitions throughout', async () => {
    const members = before.members.map((m) => m.partitions);
    expect(members).toHaveLength(2);
    expect(members.flat().sort()).toEqual([0, 1, 2]);
    expect(new Set(acme.map((s) => s.partition))).toEqual(new Set([0, 1, 2]));
    const after = await describeGroup(admin, `${g.label}-policy`, g.topics.commands);
    expect(after.members.map((m) => [m.memberId, m.partitions]).sort()).toEqual(
      before.members.map((m) => [m.memberId, m.partitions]).sort(),
    );
    // Each partition's committed position passes every record sent to it: each instance took its share.
    const sentTo = (p: number) => [...acme, ...globex].filter((s) => s.partition === p).length;
    const committed = await pollUntil(
      async () => {
        const [offsets] = await admin.fetchOffsets({ groupId: `${g.label}-policy`, topics: [g.topics.commands] });
        const byPartition = new Map((offsets?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
        return [0, 1, 2].every((p) => (byPartition.get(p) ?? -1) >= sentTo(p) + 1) ? byPartition : undefined;
      },
      10_000,
      'the policy group to commit past the burst',
    );
    for (let p = 0; p < PARTITIONS; p += 1) expect(committed.get(p)).toBeGreaterThanOrEqual(sentTo(p) + 1);
  });

  it('lets exactly the limit through for one tenant and answers RATE_LIMITED for the rest', () => {
    const statuses = acmeOutcomes().map((r) => (r.status === 'ok' ? 'ok' : r.error?.code));
    expect(statuses.filter((s) => s === 'ok')).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 'RATE_LIMITED')).toHaveLength(2 * LIMIT);
    for (const result of acmeOutcomes().filter((r) => r.status === 'ok')) {
      expect(JSON.parse(result.result ?? 'null')).toEqual({ pong: true, tenant: 'acme' });
    }
  });

  it('marks each refusal retryable with a wait that ends within the window', () => {
    const elapsed = burstSettledAt - burstStartedAt;
    const limited = acmeOutcomes().filter((r) => r.error?.code === 'RATE_LIMITED');
    expect(limited).toHaveLength(2 * LIMIT);
    for (const result of limited) {
      expect(result.status).toBe('error');
      expect(result.error?.retryable).toBe(true);
      const wait = result.error?.retry_after_ms ?? 0;
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(WINDOW_MS);
      // The oldest call in the window was taken after the burst was sent, so the wait is nearly the whole window.
      expect(wait).toBeGreaterThanOrEqual(WINDOW_MS - elapsed - 1_000);
    }
  });

  it('executes exactly the allowed calls: one order and one result per command, none for the refused', async () => {
    // Every order ever published, as a read_committed subscriber counts them (records, not offsets:
    // each transaction's marker takes one); once the watcher has them all, nothing is missing.
    const published = (await readCommitted(g.kafka.config, g.topics.execute)).length;
    await eventually(() => (watch.orders.length >= published ? true : undefined), 20_000, `${published} orders`);
    const acmeIds = new Set(acme.map((s) => s.command.command_id));
    const ordered = watch.orders.filter((o) => acmeIds.has(o.command_id)).map((o) => o.command_id);
    const executed = acme.filter((s) => outcomes.get(s.command.command_id)?.status === 'ok').map((s) => s.command.command_id);
    expect(ordered).toHaveLength(LIMIT);
    expect(new Set(ordered)).toEqual(new Set(executed));
    expect(published).toBe(2 * LIMIT);
    for (const s of [...acme, ...globex]) expect(results.of(s.command.command_id)).toHaveLength(1);
  });

  it('keeps each tenant’s window its own', () => {
    const statuses = globex.map((s) => outcomes.get(s.command.command_id)?.status);
    expect(statuses).toEqual(Array.from({ length: LIMIT }, () => 'ok'));
  });
});
