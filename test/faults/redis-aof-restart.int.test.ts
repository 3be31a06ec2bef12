import { Redis as RedisServer } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorCode } from '@gatehouse/contracts';
import type { Redis, Run } from '@gatehouse/state';
import { RIG, slotScopes, startFaultRig } from '../support/fault-rig.js';
import type { FaultRig } from '../support/fault-rig.js';
import { auditLoad, awaitLateAnswers, slotsHeld, summaryLine } from '../support/load-audit.js';
import { MixedLoad } from '../support/mixed-load.js';
import { ownAofRedis } from '../support/stack-control.js';
import type { DurableRedis } from '../support/stack-control.js';
import { eventually } from '../support/stack.js';

const CALLS = 5_000;
const CALL_TIMEOUT_MS = 60_000;

const KINDS = ['run', 'approval', 'proposal', 'idempotency'] as const;
type Kind = (typeof KINDS)[number];
/** The records a restart must not lose, by kind: key → the stored value as text. */
type Records = Record<Kind, Map<string, string>>;

/** Every run, approval, proposal and idempotency record under `prefix`, read from `redis`. */
async function readRecords(redis: Redis, prefix: string): Promise<Records> {
  const starts: Record<Kind, string> = {
    run: `${prefix}run:{`,
    approval: `${prefix}approval:{`,
    proposal: `${prefix}proposal:{`,
    idempotency: `${prefix}idem:{`,
  };
  const records: Records = { run: new Map(), approval: new Map(), proposal: new Map(), idempotency: new Map() };
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
    cursor = next;
    await Promise.all(
      keys.map(async (key) => {
        const kind = KINDS.find((k) => key.startsWith(starts[k]));
        if (kind === undefined) return;
        // A run is a string; the others are hashes, written field by field (sorted: order is no content).
        const value =
          kind === 'run'
            ? ((await redis.get(key)) ?? '')
            : JSON.stringify(Object.entries(await redis.hgetall(key)).sort(([x], [y]) => (x < y ? -1 : 1)));
        records[kind].set(key, value);
      }),
    );
  } while (cursor !== '0');
  return records;
}

/** Keys of `before` missing from `after`, and keys whose value differs (up to 20 of each). */
function differences(before: Records, after: Records): { missing: string[]; changed: string[] } {
  const missing: string[] = [];
  const changed: string[] = [];
  for (const kind of KINDS) {
    for (const [key, value] of before[kind]) {
      const now = after[kind].get(key);
      if (now === undefined) missing.push(key);
      else if (now !== value) changed.push(`${key}: ${value.slice(0, 120)} ≠ ${now.slice(0, 120)}`);
    }
  }
  return { missing: missing.slice(0, 20), changed: changed.slice(0, 20) };
}

const counts = (records: Records): Record<Kind, number> => ({
  run: records.run.size,
  approval: records.approval.size,
  proposal: records.proposal.size,
  idempotency: records.idempotency.size,
});

describe('a restart of the durable Redis (append-only file, fsync every second) during 5,000 calls', () => {
  let rig: FaultRig;
  let redis: DurableRedis;

  beforeAll(async () => {
    // Refuses loudly unless the stack script started this Redis, with its append-only file.
    redis = await ownAofRedis();
    rig = await startFaultRig('aofrestart', { redisUrl: redis.url });
  }, 120_000);
  afterAll(async () => {
    const prefix = rig.g.redisPrefix;
    await rig.stop();
    // What this run stored would otherwise stay in the append-only file for a day.
    const admin = new RedisServer(redis.url, { maxRetriesPerRequest: 1 });
    try {
      let cursor = '0';
      do {
        const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
        cursor = next;
        if (keys.length > 0) await admin.unlink(...keys);
      } while (cursor !== '0');
    } finally {
      admin.disconnect();
    }
  }, 90_000);

  it('keeps every run, approval, proposal and idempotency record, applies no write twice, answers every command once and leaks no slot', async () => {
    const { g } = rig;
    const runsBefore = new Set([...rig.runs.values()].map((r) => r.run_id));
    const load = new MixedLoad(g, {
      calls: CALLS,
      customers: rig.customers,
      inFlight: 200,
      timeoutMs: CALL_TIMEOUT_MS,
      runOf: (t) => rig.runs.get(t) as Run,
    });
    const started = Date.now();
    const loading = load.run();

    await eventually(() => (load.settled >= CALLS * 0.3 ? true : undefined), 180_000, `${CALLS * 0.3} settled calls`);
    const settledAtRestart = load.settled;
    const restart = await redis.restart((r) => readRecords(r, g.redisPrefix));
    // The server that serves the load again kept the runs: nothing had to register new ones.
    const runsKept = await Promise.all([...runsBefore].map(async (id) => (await g.redis.exists(g.keys.run(id))) === 1));

    await loading;
    const loadMs = Date.now() - started;
    await awaitLateAnswers(load, rig.results, 60_000);
    await rig.results.caughtUp();
    await rig.handoffs.caughtUp();
    const slotsInUse = await slotsHeld(g, slotScopes(rig), RIG.leaseMs + 2_000);
    const { figures, examples } = await auditLoad(g, load, rig.customers, rig.results, rig.handoffs, slotsInUse);
    // After the load, on the server that came back: what was stored at the restart is still there.
    // Runs, approvals and proposals are never deleted; a finished idempotency record never changes.
    const { idempotency: claimsAtRestart, ...kept } = restart.before;
    const stateOf = (value: string): string | undefined => new Map(JSON.parse(value) as [string, string][]).get('state');
    const finishedAtRestart = new Map([...claimsAtRestart].filter(([, value]) => stateOf(value) !== 'in_flight'));
    const atEnd = await readRecords(g.redis, g.redisPrefix);
    const goneSince = [...Object.values(kept), finishedAtRestart]
      .flatMap((m) => [...m.keys()])
      .filter((key) => !KINDS.some((k) => atEnd[k].has(key)));
    const finishedChanged = [...finishedAtRestart].filter(([key, value]) => atEnd.idempotency.get(key) !== value).map(([key]) => key);
    const reload = differences(restart.before, restart.reloaded);

    console.info(
      summaryLine('redis-aof-restart', figures, {
        'restart after': `${settledAtRestart} settled`,
        'writes held up ms': restart.outageMs,
        'records at restart': counts(restart.before),
        'records reloaded': counts(restart.reloaded),
        'runs kept': `${runsKept.filter(Boolean).length}/${runsKept.length}`,
        'load ms': loadMs,
      }),
    );

    // The restart lost nothing: the files a graceful stop left hold every record, byte for byte.
    for (const kind of KINDS) expect(restart.before[kind].size, `${kind} records at the restart`).toBeGreaterThan(0);
    expect(counts(restart.reloaded)).toEqual(counts(restart.before));
    expect(reload.missing, 'records lost by the restart').toEqual([]);
    expect(reload.changed, 'records changed by the restart').toEqual([]);
    expect(goneSince, 'records of the restart gone by the end of the load').toEqual([]);
    expect(finishedChanged, 'finished idempotency records changed after the restart').toEqual([]);
    // The runs survived, so no call was refused for want of its run.
    expect(runsKept.every(Boolean), 'runs lost by the restart').toBe(true);
    expect(figures.codes['RUN_NOT_FOUND'] ?? 0).toBe(0);
    // And the load came through whole, as after any fault.
    expect(figures.commands).toBe(CALLS);
    expect(figures.notAccepted).toBe(0);
    expect(examples.lost, 'accepted commands with no terminal result and no handoff').toEqual([]);
    expect(examples.conflicting, 'commands with two different terminal results').toEqual([]);
    expect(examples.answerMismatches, 'client answers that differ from the topic').toEqual([]);
    expect(examples.appliedTwice, 'customers changed twice').toEqual([]);
    // Every call reached the customers service with a valid assertion of its own, a re-sent write too.
    expect(examples.refusedCalls, 'calls the system of record refused').toEqual([]);
    expect(examples.reusedAssertions, 'writes re-sent with an assertion already presented').toEqual([]);
    expect(examples.contradictions, 'customers whose version contradicts the answer').toEqual([]);
    expect(figures.applied).toBe(figures.appliedKeys);
    expect(figures.applied).toBeGreaterThan(0);
    expect(Object.keys(figures.codes).filter((c) => c !== 'ok' && !isErrorCode(c))).toEqual([]);
    expect(figures.handoffs).toBeGreaterThanOrEqual(figures.codes['OUTCOME_UNKNOWN'] ?? 0);
    expect(figures.slotsInUse).toBe(0);
    expect(rig.results.undecodable).toBe(0);
  }, 420_000);
});
