import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorCode } from '@gatehouse/contracts';
import { DecodeFailure, dlqTopicOf, DLQ_HEADER } from '@gatehouse/events';
import type { ToolResult } from '@gatehouse/events';
import type { Run } from '@gatehouse/state';
import type { Message, Producer } from 'kafkajs';
import { fuzzCorpus, FUZZ_WEIGHTS } from '../support/fuzz-corpus.js';
import type { FuzzCategory } from '../support/fuzz-corpus.js';
import { Prng } from '../support/fuzz-prng.js';
import { startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse } from '../support/gatehouse.js';
import { proofFor } from '../support/signing.js';
import { pollUntil } from '../support/poll.js';
import { PolicyFleet } from '../support/policy-fleet.js';
import { openEventLedger, openLedger } from '../support/topic-ledger.js';
import type { TopicLedger } from '../support/topic-ledger.js';

const ENVELOPES = 50_000;
const SEED = Number(process.env['FUZZ_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
/** Records per produce request, and bytes, so one request stays well under the broker's limits. */
const BATCH_RECORDS = 500;
const BATCH_BYTES = 900 * 1024;
const PARTITIONS = 6;
/**
 * Policy processes sharing the commands topic. Each answers one record per produce round trip (its
 * idempotent producer keeps one request in flight per broker), so the storm is spread over several.
 */
const POLICY_PROCESSES = 3;

/**
 * What the policy processes warned of beyond the records they dead-lettered (a consumer that failed
 * and joined again, a refused offset commit, a record retried), by message with its first error: a
 * stretch of the topic handled twice shows here why.
 */
function consumerTroubles(processes: readonly { readonly name: string; output(): string }[]): Record<string, string> {
  const seen = new Map<string, { count: number; first: string }>();
  for (const process of processes) {
    for (const line of process.output().split('\n')) {
      if (!line.startsWith('{')) continue;
      let entry: { level?: number; msg?: string; err?: { message?: string } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      if ((entry.level ?? 0) < 40 || entry.msg === undefined || entry.msg === 'undecodable record sent to the DLQ') continue;
      const name = `${process.name}: ${entry.msg}`;
      const known = seen.get(name);
      if (known === undefined) seen.set(name, { count: 1, first: entry.err?.message ?? '-' });
      else known.count += 1;
    }
  }
  return Object.fromEntries([...seen].map(([name, { count, first }]) => [name, `${count}× (first: ${first.slice(0, 200)})`]));
}

/** A digest of every row of the customers service's schema: any change shows. */
async function rowsDigest(g: Gatehouse): Promise<string> {
  const t = g.customers.t;
  const tables = [t.customers, t.savedAddresses, t.orders, t.idempotencyKeys, t.outboundMessages, t.exportJobs];
  const { rows } = await g.customers.db.query<{ digest: string | null; n: string }>(
    `select md5(string_agg(x, '|' order by x)) as digest, count(*) as n from (${tables.map((table) => `select r::text as x from ${table} r`).join(' union all ')}) all_rows`,
  );
  return `${rows[0]?.n ?? '?'}:${rows[0]?.digest ?? 'empty'}`;
}

describe(`50,000 generated envelopes on gatehouse.commands (seed ${SEED}; replay with FUZZ_SEED=${SEED})`, () => {
  let g: Gatehouse;
  let agentRun: Run & { readonly run_key: string };
  let readOnlyRun: Run & { readonly run_key: string };
  let watch: Awaited<ReturnType<Gatehouse['watchOrders']>>;
  let results: TopicLedger<ToolResult>;
  let dlq: TopicLedger<Buffer | null>;
  let producer: Producer;
  let policies: PolicyFleet;

  beforeAll(async () => {
    g = await startGatehouse('fuzz', { partitions: PARTITIONS, policies: 0 });
    policies = new PolicyFleet(g, PARTITIONS);
    await policies.prepare();
    for (let i = 0; i < POLICY_PROCESSES; i += 1) await policies.spawn(`fuzz-policy-${i}`);
    await policies.awaitMembers(POLICY_PROCESSES);
    const control = policies.processes[0];
    if (control === undefined) throw new Error('no policy process');
    agentRun = await policies.createRun(control, 'acme', 'support-agent');
    readOnlyRun = await policies.createRun(control, 'acme', 'support-readonly');
    g.client.holdRunKey(agentRun.run_id, agentRun.run_key);
    watch = await g.watchOrders();
    results = await openEventLedger(g, 'results');
    dlq = await openLedger(g.kafka, dlqTopicOf(g.topics.commands), (value) => Promise.resolve(value), `${g.label}-dlq-ledger`);
    producer = g.kafka.producer({ idempotent: true, allowAutoTopicCreation: false });
    await producer.connect();
  }, 120_000);
  afterAll(async () => {
    await producer.disconnect();
    await Promise.all([results.stop(), dlq.stop(), watch.stop()]);
    await policies.stop();
    await g.stop();
  }, 60_000);

  it('answers each decodable envelope with one typed refusal, dead-letters the rest, executes nothing and keeps consuming', async () => {
    const seed = `seed ${SEED}`;
    const rowsBefore = await rowsDigest(g);
    const capabilities = new Set(agentRun.capabilities);
    const generate = fuzzCorpus({
      serde: g.serde,
      catalog: g.catalog,
      commandsSchemaId: g.serde.schemaId('commands'),
      foreignSchemaIds: (['results', 'execute', 'operator', 'approvalsRequested', 'approvalsDecided'] as const).map((r) =>
        g.serde.schemaId(r),
      ),
      agentRun,
      readOnlyRun,
      tools: g.catalog.tools().filter((t) => capabilities.has(t.address)),
    });

    // Generate, and classify each envelope with the same decoder the consumer uses.
    const rng = new Prng(SEED);
    const decodable = new Map<string, number>();
    const undecodable = new Set<string>();
    const byCategory: Partial<Record<FuzzCategory, number>> = {};
    const batches: Message[][] = [[]];
    let batchBytes = 0;
    let corpusBytes = 0;
    for (let i = 0; i < ENVELOPES; i += 1) {
      const envelope = generate(rng, i);
      byCategory[envelope.category] = (byCategory[envelope.category] ?? 0) + 1;
      const decoded = await g.serde.decode('commands', envelope.value);
      // The fuzzer plays the runtime of the live runs, which holds their keys: a command naming one
      // is proved as the policy service will read it, whatever its strings held when encoded.
      let headers = envelope.headers;
      if (decoded.ok) {
        expect(decodable.has(decoded.value.command_id), `${seed}: command ids are unique`).toBe(false);
        decodable.set(decoded.value.command_id, i);
        const run = [agentRun, readOnlyRun].find((r) => r.run_id === decoded.value.run_id);
        if (run !== undefined) headers = { ...headers, ...proofFor(run, decoded.value) };
      } else undecodable.add(envelope.key);
      const size = (envelope.value?.length ?? 0) + 64;
      corpusBytes += size;
      if (batchBytes + size > BATCH_BYTES || (batches.at(-1)?.length ?? 0) >= BATCH_RECORDS) {
        batches.push([]);
        batchBytes = 0;
      }
      batchBytes += size;
      batches.at(-1)?.push({ key: envelope.key, value: envelope.value, ...(headers === undefined ? {} : { headers }) });
    }
    expect(decodable.size + undecodable.size, seed).toBe(ENVELOPES);

    const started = Date.now();
    for (const messages of batches) {
      if (messages.length > 0) await producer.send({ topic: g.topics.commands, acks: -1, messages });
    }
    const producedMs = Date.now() - started;

    const answered = (): number =>
      new Set(results.records.flatMap((r) => (r.value !== undefined && decodable.has(r.value.command_id) ? [r.value.command_id] : [])))
        .size;
    await pollUntil(
      () => Promise.resolve(answered() === decodable.size && dlq.records.length >= undecodable.size ? true : undefined),
      150_000,
      `${seed}: answers to ${decodable.size} decodable envelopes (${answered()} so far) and ${undecodable.size} DLQ records (${dlq.records.length} so far)`,
      250,
    ).catch(() => undefined);
    const drainedMs = Date.now() - started;

    // The service still consumes: a real call after the storm is answered.
    const final = await g.client.call(
      'get_customer.v1',
      { customer_id: 'C-1842' },
      { runId: agentRun.run_id, tenant: agentRun.tenant, timeoutMs: 60_000 },
    );
    await Promise.all([results.caughtUp(), dlq.caughtUp()]);

    const perCommand = new Map<string, ToolResult[]>();
    for (const record of results.records) {
      const event = record.value;
      if (event === undefined || !decodable.has(event.command_id)) continue;
      perCommand.set(event.command_id, [...(perCommand.get(event.command_id) ?? []), event]);
    }
    const codes: Record<string, number> = {};
    const untyped: string[] = [];
    let duplicates = 0;
    for (const [commandId, events] of perCommand) {
      duplicates += events.length - 1;
      for (const event of events) {
        const code = event.error?.code ?? `status:${event.status}`;
        codes[code] = (codes[code] ?? 0) + 1;
        if (event.status !== 'error' || !isErrorCode(event.error?.code))
          untyped.push(`${commandId.slice(0, 40)} → ${event.status} ${code}`);
      }
    }
    const unanswered = [...decodable.keys()].filter((id) => !perCommand.has(id));
    const reasons: Record<string, number> = {};
    const deadKeys = new Map<string, number>();
    const strayDead: string[] = [];
    const unprovenMessages: string[] = [];
    for (const record of dlq.records) {
      const reason = record.headers?.[DLQ_HEADER.reason]?.toString() ?? 'none';
      reasons[reason] = (reasons[reason] ?? 0) + 1;
      if (reason === 'command_unproven' && unprovenMessages.length < 5)
        unprovenMessages.push(
          `${record.key ?? ''}: ${record.headers?.[DLQ_HEADER.message]?.toString() ?? ''} headers ${Object.keys(record.headers ?? {}).join(',')}`,
        );
      const key = record.key ?? '';
      deadKeys.set(key, (deadKeys.get(key) ?? 0) + 1);
      if (!undecodable.has(key) || !Object.values<string>(DecodeFailure).includes(reason)) strayDead.push(`${key} (${reason})`);
    }
    const notDead = [...undecodable].filter((key) => !deadKeys.has(key));
    const fuzzOrders = watch.orders.filter((o) => decodable.has(o.command_id));
    const rowsAfter = await rowsDigest(g);
    const crashed = [...policies.crashes];
    const troubles = consumerTroubles(policies.processes);

    console.info(
      `fuzz: seed ${SEED}, envelopes ${ENVELOPES} (${(corpusBytes / 1024 / 1024).toFixed(1)} MB), decodable ${decodable.size}, ` +
        `answered ${perCommand.size}, unanswered ${unanswered.length}, duplicate results ${duplicates}, untyped ${untyped.length}, ` +
        `DLQ ${dlq.records.length} of ${undecodable.size} expected (missing ${notDead.length}, stray ${strayDead.length}), ` +
        `answered + DLQ ${perCommand.size + deadKeys.size}, executions ${fuzzOrders.length}, rows changed ${rowsBefore === rowsAfter ? 0 : 'YES'}, ` +
        `policy crashes ${crashed.length}, policy warnings ${JSON.stringify(troubles)}, final call ${final.ok ? 'ok' : final.error.code}, produced in ${producedMs} ms, drained in ${drainedMs} ms, ` +
        `codes ${JSON.stringify(codes)}, DLQ reasons ${JSON.stringify(reasons)} ${JSON.stringify(unprovenMessages)}, categories ${JSON.stringify(byCategory)} (weights ${JSON.stringify(FUZZ_WEIGHTS)})`,
    );

    expect(crashed, `${seed}: policy processes that died`).toEqual([]);
    expect(final.ok, `${seed}: the call after the fuzz is answered`).toBe(true);
    expect(
      fuzzOrders.map((o) => o.command_id.slice(0, 40)),
      `${seed}: fuzz commands routed to execution`,
    ).toEqual([]);
    expect(watch.orders.length, `${seed}: orders other than the final call's`).toBe(1);
    expect(rowsAfter, `${seed}: PostgreSQL rows`).toBe(rowsBefore);
    expect(unanswered.slice(0, 10), `${seed}: decodable envelopes without a result (${unanswered.length})`).toEqual([]);
    expect(untyped.slice(0, 10), `${seed}: results that are not typed refusals (${untyped.length})`).toEqual([]);
    expect(notDead.slice(0, 10), `${seed}: undecodable envelopes missing from the DLQ (${notDead.length})`).toEqual([]);
    expect(strayDead.slice(0, 10), `${seed}: DLQ records that are not undecodable fuzz envelopes (${strayDead.length})`).toEqual([]);
    expect(perCommand.size + deadKeys.size, seed).toBe(ENVELOPES);
    // Nothing failed, so nothing is read twice: a record handled again would show as a second answer.
    expect(duplicates, `${seed}: repeated results (policy warnings: ${JSON.stringify(troubles)})`).toBe(0);
    expect(dlq.records.length, `${seed}: repeated DLQ records (policy warnings: ${JSON.stringify(troubles)})`).toBe(undecodable.size);
    expect(results.undecodable, seed).toBe(0);
  }, 300_000);
});
