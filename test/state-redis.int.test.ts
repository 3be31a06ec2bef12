import { createHash, randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { Redis as RedisServer } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApprovalStore,
  createRedis,
  ClaimLedger,
  onLedgerStep,
  isActive,
  Keyspace,
  LuaScript,
  ProposalStore,
  RateLimiter,
  redisUrlFromEnv,
  ResourceLock,
  RunRegistry,
  SlotPool,
} from '@gatehouse/state';
import type { LedgerStep, Redis, Run } from '@gatehouse/state';
import { sampleApproval, sampleProposal } from './support/approval-records.js';
import { pollUntil } from './support/poll.js';
import { REDIS_CLUSTER_URL } from './support/stack-control.js';

/** Every store runs the same on one server and on a Redis Cluster (REDIS_URL with `cluster`). */
const BACKENDS = [
  { backend: 'one Redis server', url: redisUrlFromEnv() },
  { backend: 'a three-node Redis Cluster', url: REDIS_CLUSTER_URL },
];

/** Alternates between instances, as two processes would. */
function either<T>(items: readonly T[], i: number): T {
  return items[i % items.length] as T;
}
const keys = () => new Keyspace(`t-${randomUUID().slice(0, 8)}:`);

/** The servers behind a connection: the one server, or every master of the cluster. */
function servers(redis: Redis): RedisServer[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/** On how many of the connection's servers a script is loaded. */
async function loadedOn(redis: Redis, sha1: string): Promise<number> {
  const answers = await Promise.all(servers(redis).map((s) => s.script('EXISTS', sha1) as Promise<number[]>));
  return answers.filter((a) => a[0] === 1).length;
}

async function flushScripts(redis: Redis): Promise<void> {
  await Promise.all(servers(redis).map((s) => s.script('FLUSH')));
}

function run(overrides: Partial<Run> = {}): Run {
  const now = Date.now();
  return {
    run_id: `run-${randomUUID()}`,
    tenant: 'acme',
    principal: 'agent:support-bot',
    role: 'support-agent',
    capabilities: ['get_customer.v1'],
    environment: 'sandbox',
    created_at: now,
    expires_at: now + 60_000,
    stopped_at: null,
    ...overrides,
  };
}

describe.each(BACKENDS)('state on $backend', ({ url }) => {
  let a: Redis;
  let b: Redis;

  beforeAll(async () => {
    a = createRedis(url, 'test-state-a');
    b = createRedis(url, 'test-state-b');
    // A backend that is not there fails here, by name, not in every test below.
    await Promise.all([a.ping(), b.ping()]).catch((error: unknown) => {
      throw new Error(`Redis at ${url} does not answer (node deploy/local/stack.mjs up starts it): ${String(error)}`);
    });
  });
  afterAll(async () => {
    await Promise.all([a.quit(), b.quit()]);
  });

  describe('RunRegistry', () => {
    it('registers a run once and never lets the same id be overwritten or widened', async () => {
      const runs = new RunRegistry(a, keys());
      const first = run();
      expect(await runs.create(first)).toBe(true);
      expect(await runs.create({ ...first, capabilities: ['delete_all.v1'] })).toBe(false);
      expect(await runs.get(first.run_id)).toEqual(first);
      expect(await runs.list('acme')).toEqual([first]);
      expect(await runs.list('globex')).toEqual([]);
    });

    it('stops a run so it is no longer active, and says so only once', async () => {
      const runs = new RunRegistry(a, keys());
      const r = run();
      await runs.create(r);
      expect(await runs.stop(r.run_id)).toBe('stopped');
      expect(await runs.stop(r.run_id)).toBe('already_stopped');
      expect(await runs.stop('nope')).toBe('not_found');
      const stopped = await runs.get(r.run_id);
      expect(stopped && isActive(stopped)).toBe(false);
      expect(isActive(r)).toBe(true);
      expect(isActive(run({ expires_at: Date.now() - 1 }))).toBe(false);
    });

    it("moves a run's expiry later, never earlier, and never for a stopped run", async () => {
      const space = keys();
      const runs = new RunRegistry(a, space);
      const now = Date.now();
      const lapsed = run({ expires_at: now - 1_000 });
      await runs.create(lapsed);
      expect(await runs.extend(lapsed, now - 5_000)).toBe('unchanged');
      expect(await runs.extend(lapsed, now + 120_000)).toBe('extended');
      const moved = await runs.get(lapsed.run_id);
      expect(moved).toEqual({ ...lapsed, expires_at: now + 120_000 });
      expect(moved && isActive(moved)).toBe(true);
      expect((await runs.list('acme')).map((r) => r.run_id)).toEqual([lapsed.run_id]);
      expect(await a.pttl(space.run(lapsed.run_id))).toBeGreaterThan(120_000);
      expect(await runs.stop(lapsed.run_id)).toBe('stopped');
      expect(await runs.extend(lapsed, now + 240_000)).toBe('stopped');
      expect((await runs.get(lapsed.run_id))?.expires_at).toBe(now + 120_000);
      expect(await runs.extend(run(), now + 240_000)).toBe('not_found');
    });

    it('keeps a stopped run granted no tools a run with none, as Redis re-encodes it', async () => {
      const runs = new RunRegistry(a, keys());
      const r = run({ capabilities: [] });
      await runs.create(r);
      expect(await runs.stop(r.run_id)).toBe('stopped');
      expect((await runs.get(r.run_id))?.capabilities).toEqual([]);
    });
  });

  describe('RateLimiter', () => {
    it('allows exactly the limit across two instances racing, and tells the rest when to retry', async () => {
      const space = keys();
      const limiters = [new RateLimiter(a, space), new RateLimiter(b, space)];
      const decisions = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          either(limiters, i).take('get_customer.v1', 'tenant:acme', { limit: 7, windowMs: 10_000 }, `call-${i}`),
        ),
      );
      const allowed = decisions.filter((d) => d?.allowed === true);
      const refused = decisions.filter((d) => d?.allowed === false);
      expect(allowed).toHaveLength(7);
      expect(refused).toHaveLength(33);
      for (const d of refused) {
        if (d?.allowed !== false) continue;
        expect(d.retryAfterMs).toBeGreaterThan(0);
        expect(d.retryAfterMs).toBeLessThanOrEqual(10_000);
      }
      const other = await limiters[0]?.take('get_customer.v1', 'tenant:globex', { limit: 7, windowMs: 10_000 }, 'g-1');
      expect(other?.allowed).toBe(true);
    });

    it('gives a redelivered call the answer it had, even when the window is full', async () => {
      const limiter = new RateLimiter(a, keys());
      const limit = { limit: 1, windowMs: 10_000 };
      expect(await limiter.take('t.v1', 'run:r', limit, 'call-1')).toEqual({ allowed: true });
      expect((await limiter.take('t.v1', 'run:r', limit, 'call-2')).allowed).toBe(false);
      expect(await limiter.take('t.v1', 'run:r', limit, 'call-1')).toEqual({ allowed: true });
    });
  });

  describe('ClaimLedger, by name (an executor’s command claims and write keys)', () => {
    it('runs a key once and answers every later claim with the stored outcome', async () => {
      const store = new ClaimLedger(a, keys());
      expect(await store.claim('run9:p_7f31:commit', 'h1', 'exec-1', 5_000)).toEqual({ kind: 'claimed' });
      expect(await store.claim('run9:p_7f31:commit', 'h1', 'exec-2', 5_000)).toMatchObject({ kind: 'in_progress', owner: 'exec-1' });
      expect(await store.settle('run9:p_7f31:commit', 'exec-2', 'succeeded', 'wrong owner')).toBe(false);
      expect(await store.settle('run9:p_7f31:commit', 'exec-1', 'succeeded', '{"new_version":18}')).toBe(true);
      expect(await store.claim('run9:p_7f31:commit', 'h1', 'exec-3', 5_000)).toEqual({
        kind: 'settled',
        verdict: 'succeeded',
        answer: '{"new_version":18}',
      });
      expect(await store.claim('run9:p_7f31:commit', 'h2', 'exec-3', 5_000)).toEqual({ kind: 'reused' });
      expect(await store.get('run9:p_7f31:commit')).toMatchObject({ state: 'succeeded', arguments_sha256: 'h1', owner: 'exec-1' });
    });

    it('hands a key whose owner died to exactly one new owner as orphaned, never as a fresh claim', async () => {
      const store = new ClaimLedger(a, keys());
      await store.claim('k', 'h', 'dead-exec', 30);
      let first: Awaited<ReturnType<ClaimLedger['claim']>> | undefined;
      const started = Date.now();
      do {
        first = await store.claim('k', 'h', 'exec-2', 5_000);
        if (first.kind !== 'in_progress') break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      } while (Date.now() - started < 2_000);
      expect(first).toEqual({ kind: 'orphaned', previousOwner: 'dead-exec' });
      expect(await store.claim('k', 'h', 'exec-3', 5_000)).toMatchObject({ kind: 'in_progress', owner: 'exec-2' });
    });

    it('gives the next owner the answer a dead owner staged, and drops it once the key is finished', async () => {
      const space = keys();
      const store = new ClaimLedger(a, space);
      expect(await store.claim('cmd:c-1', 'h', 'dead-exec', 30, 'c-1')).toEqual({ kind: 'claimed' });
      expect(await store.claim('cmd:c-1', 'h', 'exec-2', 5_000, 'c-1')).toMatchObject({
        kind: 'in_progress',
        owner: 'dead-exec',
        commandId: 'c-1',
      });
      const terms = { argumentsSha256: 'h', leaseMs: 30, commandId: 'c-1' };
      expect(await store.stage('cmd:c-1', 'exec-2', '{"status":"ok"}', terms)).toBe('taken');
      const stagedFrom = Date.now();
      expect(await store.stage('cmd:c-1', 'dead-exec', '{"status":"ok"}', terms)).toBe('staged');
      await new Promise((resolve) => setTimeout(resolve, 40));
      const orphaned = await store.claim('cmd:c-1', 'h', 'exec-2', 5_000, 'c-1');
      expect(orphaned).toEqual({
        kind: 'orphaned',
        previousOwner: 'dead-exec',
        staged: '{"status":"ok"}',
        stagedAt: expect.any(Number) as number,
      });
      // When it was staged, by the server's clock (the same machine's here).
      expect(orphaned.kind === 'orphaned' ? orphaned.stagedAt : 0).toBeGreaterThanOrEqual(stagedFrom - 1_000);
      expect(orphaned.kind === 'orphaned' ? orphaned.stagedAt : 0).toBeLessThanOrEqual(Date.now() + 1_000);
      expect(await store.settle('cmd:c-1', 'exec-2', 'succeeded', 'ok')).toBe(true);
      expect(await a.hexists(space.idempotency('cmd:c-1'), 'staged')).toBe(0);
      expect(await store.claim('cmd:c-1', 'h', 'exec-3', 5_000, 'c-1')).toEqual({ kind: 'settled', verdict: 'succeeded', answer: 'ok' });
    });

    it('says why an answer was not staged, and makes again a key Redis lost, held by the stager with the answer staged', async () => {
      const space = keys();
      const store = new ClaimLedger(a, space);
      const terms = { argumentsSha256: 'h', leaseMs: 5_000, commandId: 'c-2' };
      expect(await store.claim('cmd:c-2', 'h', 'exec-1', 5_000, 'c-2')).toEqual({ kind: 'claimed' });
      expect(await store.stage('cmd:c-2', 'exec-1', '{"status":"ok"}', terms)).toBe('staged');
      expect(await store.stage('cmd:c-2', 'exec-2', '{"status":"ok"}', terms)).toBe('taken');
      expect(await store.settle('cmd:c-2', 'exec-1', 'succeeded', 'ok')).toBe(true);
      expect(await store.stage('cmd:c-2', 'exec-1', '{"status":"ok"}', terms)).toBe('taken');
      // As after a restart of a Redis that keeps nothing on disk, or a failover that lost the claim.
      await a.del(space.idempotency('cmd:c-2'));
      expect(await store.stage('cmd:c-2', 'exec-1', '{"status":"ok"}', terms)).toBe('staged');
      expect(await a.pttl(space.idempotency('cmd:c-2'))).toBeGreaterThan(store.retentionMs - 60_000);
      // Its owner's lease holds it; another copy of the command waits, and a copy with other arguments is refused.
      expect(await store.claim('cmd:c-2', 'h', 'exec-2', 5_000, 'c-2')).toMatchObject({
        kind: 'in_progress',
        owner: 'exec-1',
        commandId: 'c-2',
      });
      expect(await store.claim('cmd:c-2', 'other', 'exec-2', 5_000, 'c-2')).toEqual({ kind: 'reused' });
      expect(await store.settle('cmd:c-2', 'exec-1', 'succeeded', '{"status":"ok"}')).toBe(true);
      expect(await store.claim('cmd:c-2', 'h', 'exec-2', 5_000, 'c-2')).toEqual({
        kind: 'settled',
        verdict: 'succeeded',
        answer: '{"status":"ok"}',
      });
    });

    it('keeps an unknown outcome until an operator resolves it', async () => {
      const store = new ClaimLedger(a, keys());
      await store.claim('u', 'h', 'exec-1', 5_000);
      await store.settle('u', 'exec-1', 'unknown', '{"code":"OUTCOME_UNKNOWN"}');
      expect(await store.claim('u', 'h', 'exec-2', 5_000)).toEqual({ kind: 'unknown', answer: '{"code":"OUTCOME_UNKNOWN"}' });
      const resolution = { state: 'succeeded', outcome: '{"new_version":18}', by: 'ops@acme', fingerprint: 'r1' } as const;
      expect(await store.resolveUnknown('u', resolution)).toEqual({ kind: 'resolved', outcome: '{"new_version":18}' });
      // The same resolution again, its answer not yet out (a retry): the outcome it stored, never a second one.
      expect(await store.resolveUnknown('u', { ...resolution, outcome: '{"new_version":19}' })).toEqual({
        kind: 'resolved',
        outcome: '{"new_version":18}',
      });
      expect(await store.resolveUnknown('u', { state: 'failed', outcome: '{}', by: 'ops@acme', fingerprint: 'r2' })).toEqual({
        kind: 'not_unknown',
      });
      await store.resolutionPublished('u');
      expect(await store.resolveUnknown('u', resolution)).toEqual({ kind: 'not_unknown' });
      expect(await store.resolveUnknown('missing', { ...resolution, fingerprint: 'r3' })).toEqual({ kind: 'not_found' });
      expect(await store.claim('u', 'h', 'exec-2', 5_000)).toEqual({ kind: 'settled', verdict: 'succeeded', answer: '{"new_version":18}' });
    });

    it('gives a claimed key back only to its owner, so the legitimate call can claim it afresh', async () => {
      const store = new ClaimLedger(a, keys());
      await store.claim('g', 'h', 'exec-1', 5_000);
      expect(await store.giveBack('g', 'exec-2')).toBe(false);
      expect(await store.giveBack('g', 'exec-1')).toBe(true);
      expect(await store.get('g')).toBeUndefined();
      expect(await store.claim('g', 'h', 'exec-2', 5_000)).toEqual({ kind: 'claimed' });
      expect(await store.renew('g', 'exec-1', 5_000)).toBe(false);
      expect(await store.renew('g', 'exec-2', 5_000)).toBe(true);
    });

    it('gives a staged entry back with its answer kept and its lease ended: the next claimant repeats that answer at once', async () => {
      const store = new ClaimLedger(a, keys());
      const terms = { argumentsSha256: 'h', leaseMs: 60_000, commandId: 'c-4' };
      await store.claim('s', 'h', 'exec-1', 60_000, 'c-4');
      expect(await store.stage('s', 'exec-1', '{"status":"ok"}', terms)).toBe('staged');
      expect(await store.giveBack('s', 'exec-1')).toBe(true);
      expect(await store.claim('s', 'h', 'exec-2', 60_000, 'c-4')).toEqual({
        kind: 'orphaned',
        previousOwner: 'exec-1',
        staged: '{"status":"ok"}',
        stagedAt: expect.any(Number) as number,
      });
    });

    it('reports every step with the entry’s version, rising across connections and across an entry given back and made again', async () => {
      const space = keys();
      const [one, two] = [new ClaimLedger(a, space), new ClaimLedger(b, space)];
      const steps: LedgerStep[] = [];
      const stop = onLedgerStep((step) => steps.push(step));
      try {
        const terms = { argumentsSha256: 'h', leaseMs: 60_000, commandId: 'c-5' };
        await one.claim('h5', 'h', 'exec-1', 60_000, 'c-5');
        await two.claim('h5', 'h', 'exec-2', 60_000, 'c-5');
        await one.renew('h5', 'exec-1', 60_000);
        await one.giveBack('h5', 'exec-1');
        await two.claim('h5', 'h', 'exec-2', 60_000, 'c-5');
        await two.stage('h5', 'exec-2', '{"status":"ok"}', terms);
        await one.settle('h5', 'exec-1', 'succeeded', 'no');
        await two.settle('h5', 'exec-2', 'succeeded', 'ok');
        await one.claim('h5', 'h', 'exec-3', 60_000, 'c-5');
      } finally {
        stop();
      }
      // Each step is noted twice: attempted before its script runs, and taken once its reply is back.
      const attempts = steps.filter((step) => step.entry === space.idempotency('h5') && step.reply === 'attempted');
      const mine = steps.filter((step) => step.entry === space.idempotency('h5') && step.reply !== 'attempted');
      expect(attempts.map((step) => `${step.op} ${step.owner}`)).toEqual(mine.map((step) => `${step.op} ${step.owner}`));
      expect(mine.map((step) => `${step.op} ${step.owner} ${step.reply}`)).toEqual([
        'claim exec-1 claimed',
        'claim exec-2 in_progress',
        'renew exec-1 done',
        'give_back exec-1 done',
        'claim exec-2 claimed',
        'stage exec-2 staged',
        'settle exec-1 refused',
        'settle exec-2 done',
        'claim exec-3 settled',
      ]);
      // Steps that changed the entry raise its version; one that changed nothing reports the version it saw.
      const versions = mine.map((step) => step.version);
      for (const [i, step] of mine.entries()) {
        if (i === 0) continue;
        const changed = ['claimed', 'done', 'staged'].includes(step.reply);
        if (changed) expect(versions[i]).toBeGreaterThan(versions[i - 1] ?? Infinity);
        else expect(versions[i]).toBe(versions[i - 1]);
      }
    });
  });

  describe('SlotPool', () => {
    it('never grants more leases than the limit of any scope, across instances', async () => {
      const space = keys();
      const pools = [new SlotPool(a, space), new SlotPool(b, space)];
      const scopes = [
        { scope: 'tenant:acme', limit: 4 },
        { scope: 'run:r1', limit: 10 },
      ];
      const got = await Promise.all(Array.from({ length: 20 }, (_, i) => either(pools, i).tryAcquire(scopes, `lease-${i}`, 10_000)));
      expect(got.filter(Boolean)).toHaveLength(4);
      expect(await pools[0]?.inUse('tenant:acme')).toBe(4);
      expect(await pools[0]?.inUse('run:r1')).toBe(4);
      const holder = got.findIndex(Boolean);
      await pools[0]?.release(scopes, `lease-${holder}`);
      expect(await pools[0]?.inUse('tenant:acme')).toBe(3);
      expect(await pools[0]?.inUse('run:r1')).toBe(3);
      expect(await pools[1]?.tryAcquire(scopes, 'late', 10_000)).toBe(true);
    });

    it('renews a lease every scope still holds, and says so when one lost it', async () => {
      const pool = new SlotPool(a, keys());
      const scopes = [
        { scope: 'tenant:acme', limit: 1 },
        { scope: 'run:r2', limit: 1 },
      ];
      expect(await pool.tryAcquire(scopes, 'held', 40)).toBe(true);
      expect(await pool.renew(scopes, 'held', 10_000)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 60));
      // Renewed past the first lease's 40 ms: the slot is still taken.
      expect(await pool.tryAcquire(scopes, 'other', 10_000)).toBe(false);
      await pool.release(scopes, 'held');
      expect(await pool.renew(scopes, 'held', 10_000)).toBe(false);
      expect(await pool.renew(scopes, 'never', 10_000)).toBe(false);
    });

    it('reclaims the slot of a lease that was never renewed (a dead executor)', async () => {
      const pool = new SlotPool(a, keys());
      const scopes = [{ scope: 'tenant:acme', limit: 1 }];
      expect(await pool.tryAcquire(scopes, 'dead', 40)).toBe(true);
      expect(await pool.tryAcquire(scopes, 'alive', 10_000)).toBe(false);
      expect(await pool.acquire(scopes, 'alive', 10_000, Date.now() + 5_000)).toBe(true);
      expect(await pool.inUse('tenant:acme')).toBe(1);
    });

    it('gives up waiting at the deadline', async () => {
      const pool = new SlotPool(a, keys());
      const scopes = [{ scope: 'tenant:acme', limit: 1 }];
      await pool.tryAcquire(scopes, 'holder', 10_000);
      const started = Date.now();
      expect(await pool.acquire(scopes, 'waiter', 10_000, started + 150)).toBe(false);
      expect(Date.now() - started).toBeLessThan(1_000);
    });
  });

  describe('ClaimLedger, by command (the policy’s claims of command ids)', () => {
    const sha = (c: string): string => c.repeat(64);
    const terms = (c: string, leaseMs = 10_000) => ({ argumentsSha256: sha(c), leaseMs, commandId: '' });
    const kind = async (found: Promise<{ claim: { kind: string } }>): Promise<string> => (await found).claim.kind;

    /** A keyspace whose runs run-1 … exist: a command naming a run that does not is never claimed. */
    const keysWithRuns = async (): Promise<Keyspace> => {
      const space = keys();
      const runs = new RunRegistry(a, space);
      for (const id of ['run-1', 'run-2', 'run-3']) await runs.create(run({ run_id: id }));
      return space;
    };
    const entryKey = (space: Keyspace, runId: string, commandId: string, tenant = 'acme'): string =>
      space.commandClaim(
        runId,
        createHash('sha256').update(`${tenant.length}:${tenant}${runId.length}:${runId}`).update(commandId).digest('hex'),
      );

    it('reads the run record with the claim, in one script, and stores nothing for a run that does not exist', async () => {
      const space = keys();
      const runs = new RunRegistry(a, space);
      const registered = run({ run_id: 'run-7' });
      await runs.create(registered);
      const ledger = new ClaimLedger(b, space);
      const claimKey = (runId: string, commandId: string, runKey = runId): string =>
        space.commandClaim(runKey, createHash('sha256').update(`4:acme${runId.length}:${runId}`).update(commandId).digest('hex'));
      expect(JSON.parse((await ledger.commandEntry('acme', 'run-7', 'cmd-9').claim(terms('a'), 'p-1', 60_000)).run ?? 'null')).toEqual(
        registered,
      );
      expect(await a.exists(claimKey('run-7', 'cmd-9'))).toBe(1);
      // A run that does not exist, and a hostile id no run can have: nothing is stored, however often.
      expect(await ledger.commandEntry('acme', 'run-8', 'cmd-9').claim(terms('a'), 'p-1', 60_000)).toEqual({
        claim: { kind: 'no_run' },
        run: null,
      });
      expect(await a.exists(claimKey('run-8', 'cmd-9'))).toBe(0);
      const hostile = `run{${'x'.repeat(5_000)}}`;
      for (let i = 0; i < 3; i += 1) {
        expect(await ledger.commandEntry('acme', hostile, `cmd-${i}`).claim(terms('a'), 'p-1', 60_000)).toEqual({
          claim: { kind: 'no_run' },
          run: null,
        });
        expect(await a.exists(claimKey(hostile, `cmd-${i}`, createHash('sha256').update(hostile).digest('hex')))).toBe(0);
      }
    });

    it('answers a command_id once: a copy in flight waits, a copy after the answer and another payload get nothing', async () => {
      const space = await keysWithRuns();
      const [l1, l2] = [new ClaimLedger(a, space), new ClaimLedger(b, space)];
      const [e1, e2] = [l1.commandEntry('acme', 'run-1', 'cmd-1'), l2.commandEntry('acme', 'run-1', 'cmd-1')];
      expect(await kind(e1.claim(terms('a'), 'p-1', 60_000))).toBe('claimed');
      expect(await kind(e2.claim(terms('a'), 'p-2', 60_000))).toBe('in_progress');
      expect(await kind(e2.claim(terms('b'), 'p-2', 60_000))).toBe('reused');
      // The same id under another tenant is another command.
      expect(await kind(l2.commandEntry('globex', 'run-1', 'cmd-1').claim(terms('b'), 'p-2', 60_000))).toBe('claimed');
      expect(await e1.stage('p-1', '[{"decided":1}]', terms('a'), 60_000)).toBe('staged');
      expect(await e1.settle('p-1', '')).toBe(true);
      expect(await kind(e2.claim(terms('a'), 'p-2', 60_000))).toBe('settled');
      expect(await kind(e2.claim(terms('b'), 'p-2', 60_000))).toBe('reused');
      // A settled entry is never given back, nor staged again.
      expect(await e1.giveBack('p-1')).toBe(false);
      expect(await e2.stage('p-2', '[]', terms('a'), 60_000)).toBe('taken');
      expect(await kind(e2.claim(terms('a'), 'p-2', 60_000))).toBe('settled');
    });

    it('gives a taken-over command its staged decision, never a new one, and lets an undecided claim go', async () => {
      const space = await keysWithRuns();
      const entry = new ClaimLedger(a, space).commandEntry('acme', 'run-1', 'cmd-2');
      const quick = terms('a', 200);
      expect(await kind(entry.claim(quick, 'p-1', 60_000))).toBe('claimed');
      expect(await entry.giveBack('p-2')).toBe(false);
      expect(await kind(entry.claim(quick, 'p-2', 60_000))).toBe('in_progress');
      // A failed worker that had not decided gives its claim back: the retry claims it at once.
      expect(await entry.giveBack('p-1')).toBe(true);
      expect(await kind(entry.claim(quick, 'p-2', 60_000))).toBe('claimed');
      // Its lease runs out before it decides: another worker takes over and decides.
      expect(
        await pollUntil(
          async () => ((await entry.claim(quick, 'p-3', 60_000)).claim.kind === 'orphaned' ? true : undefined),
          5_000,
          'the lease to run out',
        ),
      ).toBe(true);
      const decision = '[{"role":"results","key":"run-1","event":{"status":"ok","note":"a:b:c"}}]';
      expect(await entry.stage('p-3', decision, quick, 60_000)).toBe('staged');
      // The worker it took over from, slow but alive, stages too late: its decision is not the command's.
      expect(await entry.stage('p-2', '[{"late":1}]', quick, 60_000)).toBe('taken');
      // That worker dies after staging: whoever comes next gets the staged decision, byte for byte.
      const next = await pollUntil(
        async () => {
          const { claim } = await entry.claim(quick, 'p-4', 60_000);
          return claim.kind === 'orphaned' ? claim : undefined;
        },
        5_000,
        'the staged claim to be taken over',
      );
      expect(next).toEqual({ kind: 'orphaned', previousOwner: 'p-3', staged: decision, stagedAt: expect.any(Number) as number });
      // A worker that failed after staging keeps the decision and ends its lease at once.
      expect(await kind(entry.claim(quick, 'p-5', 60_000))).toBe('in_progress');
      expect(await entry.giveBack('p-4')).toBe(true);
      expect((await entry.claim(quick, 'p-5', 60_000)).claim).toEqual({
        kind: 'orphaned',
        previousOwner: 'p-4',
        staged: decision,
        stagedAt: expect.any(Number) as number,
      });
    });

    it('lets a worker whose claim Redis lost (a restart without persistence) stage its decision, once', async () => {
      const space = await keysWithRuns();
      const entry = new ClaimLedger(a, space).commandEntry('acme', 'run-1', 'cmd-3');
      expect(await kind(entry.claim(terms('a'), 'p-1', 60_000))).toBe('claimed');
      // Where the claim lives: the hash of the length-prefixed tenant and the id, never the raw strings.
      expect(await a.del(entryKey(space, 'run-1', 'cmd-3'))).toBe(1);
      expect(await entry.stage('p-1', '[{"d":1}]', terms('a'), 60_000)).toBe('staged');
      expect(await kind(entry.claim(terms('a'), 'p-2', 60_000))).toBe('in_progress');
      expect(await entry.stage('p-2', '[{"d":2}]', terms('a'), 60_000)).toBe('taken');
    });

    it('reads the claims an earlier release wrote as strings: claimed, staged and answered, each keeping its TTL', async () => {
      const space = await keysWithRuns();
      const ledger = new ClaimLedger(a, space);
      const decision = '[{"role":"results","key":"run-1","event":{"status":"ok","note":"x:y"}}]';
      await a.set(entryKey(space, 'run-1', 'old-c'), `c:${sha('a')}:${Date.now() + 60_000}`, 'PX', 90_000);
      await a.set(entryKey(space, 'run-1', 'old-s'), `s:${sha('a')}:0:${decision}`, 'PX', 90_000);
      await a.set(entryKey(space, 'run-1', 'old-a'), `a:${sha('a')}:0`, 'PX', 90_000);
      // Claimed by a worker of the earlier release, its lease still running: a copy waits for it.
      expect(await kind(ledger.commandEntry('acme', 'run-1', 'old-c').claim(terms('a'), 'p-1', 60_000))).toBe('in_progress');
      expect((await ledger.commandEntry('acme', 'run-1', 'old-s').claim(terms('a'), 'p-1', 60_000)).claim).toEqual({
        kind: 'orphaned',
        previousOwner: '',
        staged: decision,
        stagedAt: expect.any(Number) as number,
      });
      expect(await kind(ledger.commandEntry('acme', 'run-1', 'old-a').claim(terms('a'), 'p-1', 60_000))).toBe('settled');
      expect(await kind(ledger.commandEntry('acme', 'run-1', 'old-a').claim(terms('b'), 'p-1', 60_000))).toBe('reused');
      for (const id of ['old-c', 'old-s', 'old-a']) {
        expect(await a.type(entryKey(space, 'run-1', id))).toBe('hash');
        expect(await a.pttl(entryKey(space, 'run-1', id))).toBeGreaterThan(60_000);
      }
    });
  });

  describe('ResourceLock', () => {
    it('serializes one resource and only lets the holder unlock it', async () => {
      const space = keys();
      const [l1, l2] = [new ResourceLock(a, space), new ResourceLock(b, space)];
      expect(await l1.tryLock('customer:C-1842', 't1', 10_000)).toBe(true);
      expect(await l2.tryLock('customer:C-1842', 't2', 10_000)).toBe(false);
      expect(await l2.tryLock('customer:C-7', 't2', 10_000)).toBe(true);
      expect(await l2.unlock('customer:C-1842', 't2')).toBe(false);
      expect(await l1.unlock('customer:C-1842', 't1')).toBe(true);
      expect(await l2.lock('customer:C-1842', 't2', 10_000, Date.now() + 1_000)).toBe(true);
    });
  });

  describe('LuaScript', () => {
    it('runs a script by its digest, and loads it again after Redis forgot its scripts', async () => {
      const script = new LuaScript(`return {KEYS[1], ARGV[1], '${randomUUID()}'}`);
      const uncached = createRedis(url, 'test-state-lua');
      try {
        // Never loaded: EVALSHA answers NOSCRIPT and the text goes over once, to the server of the key.
        expect(await loadedOn(uncached, script.sha1)).toBe(0);
        const first = (await script.run(uncached, 1, 'k', 'v')) as string[];
        expect(first.slice(0, 2)).toEqual(['k', 'v']);
        expect(await loadedOn(uncached, script.sha1)).toBe(1);
        // As after a restart: the cache is empty again, and the call still succeeds.
        await flushScripts(uncached);
        expect((await script.run(uncached, 1, 'k2', 'v2')) as string[]).toEqual(['k2', 'v2', first[2]]);
        // And the idempotency protocol keeps working across the flush.
        const store = new ClaimLedger(a, keys());
        await flushScripts(a);
        expect(await store.claim('op-1', 'sha', 'owner-1', 5_000)).toEqual({ kind: 'claimed' });
        expect(await store.settle('op-1', 'owner-1', 'succeeded', 'ok')).toBe(true);
      } finally {
        await uncached.quit();
      }
    });
  });

  describe('LuaScript batches', () => {
    it('sends the script calls of one turn as one EVALSHA, run in the order made, each answered alone (a failing one too)', async () => {
      const tag = `{b-${randomUUID().slice(0, 8)}}`;
      const count = new LuaScript(`return {redis.call('INCR', KEYS[1]), ARGV[1]}`);
      const wrongType = new LuaScript(`return redis.call('HGET', KEYS[1], 'field')`);
      const nothing = new LuaScript(`if ARGV[1] == 'nil' then return nil end return false`);
      const conn = createRedis(url, 'test-state-batch');
      const sent: unknown[] = [];
      const evalsha = conn.evalsha.bind(conn) as (...args: unknown[]) => Promise<unknown>;
      (conn as unknown as { evalsha: (...args: unknown[]) => Promise<unknown> }).evalsha = (...args: unknown[]) => {
        sent.push(args[0]);
        return evalsha(...args);
      };
      try {
        await conn.set(`${tag}:string`, 'x');
        const calls: Promise<unknown>[] = [];
        for (let i = 0; i < 30; i += 1) {
          calls.push(count.run(conn, 1, `${tag}:counter`, `call-${i}`));
          if (i % 10 === 0) calls.push(wrongType.run(conn, 1, `${tag}:string`));
        }
        calls.push(nothing.run(conn, 1, `${tag}:n`, 'nil'), nothing.run(conn, 1, `${tag}:n`, 'false'));
        // An error the script returns, rather than raises, fails that call too; a wrong key count never reaches Redis.
        const refused = new LuaScript(`return redis.error_reply('REFUSED by the script')`).run(conn, 1, `${tag}:r`);
        await expect(count.run(conn, 2, `${tag}:counter`)).rejects.toThrow(/keys/);
        const settled = await Promise.allSettled(calls);
        await expect(refused).rejects.toThrow(/REFUSED by the script/);
        // One EVALSHA (or, after Redis forgot the batch script, one EVAL) for all 36 calls.
        expect(sent.length).toBe(1);
        const counted = settled.flatMap((s) => (s.status === 'fulfilled' && Array.isArray(s.value) ? [s.value] : []));
        expect(counted).toEqual(Array.from({ length: 30 }, (_, i) => [i + 1, `call-${i}`]));
        const failed = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
        expect(failed.length).toBe(3);
        for (const f of failed) expect(String((f.reason as Error).message)).toMatch(/WRONGTYPE/);
        expect(settled.slice(-2).map((s) => (s.status === 'fulfilled' ? s.value : 'rejected'))).toEqual([null, null]);
        // A call alone in its turn is sent as itself.
        expect(await count.run(conn, 1, `${tag}:counter`, 'alone')).toEqual([31, 'alone']);
        expect(sent.at(-1)).toBe(count.sha1);
      } finally {
        await conn.quit();
      }
    });
  });

  describe('ProposalStore', () => {
    it('is consumed once: the same key may ask again, another key is refused, and a release re-opens it', async () => {
      const store = new ProposalStore(a, keys());
      const proposal = sampleProposal();
      await store.save(proposal);
      await expect(store.save(proposal)).rejects.toThrow(/already exists/);
      expect(await store.consume(proposal.proposal_id, 'key-1')).toBe('consumed');
      expect(await store.consume(proposal.proposal_id, 'key-1')).toBe('consumed');
      expect(await store.consume(proposal.proposal_id, 'key-2')).toBe('already_consumed');
      expect(await store.release(proposal.proposal_id, 'key-2')).toBe(false);
      expect(await store.release(proposal.proposal_id, 'key-1')).toBe(true);
      expect(await store.consume(proposal.proposal_id, 'key-2')).toBe('consumed');
      expect(await store.consume('p_missing', 'key-1')).toBe('missing');
      expect((await store.get(proposal.proposal_id))?.proposal).toEqual(proposal);
    });
  });

  describe('ApprovalStore', () => {
    it('keeps an approval written once, and lets one idempotency key consume it', async () => {
      const store = new ApprovalStore(b, keys());
      const record = sampleApproval('p_1');
      await store.save(record);
      await expect(store.save({ ...record, approved_by: 'mallory' })).rejects.toThrow(/already exists/);
      expect(await store.get(record.approval_id)).toEqual({ record, consumedBy: null });
      expect(await store.consume(record.approval_id, 'key-1')).toBe('consumed');
      expect(await store.consume(record.approval_id, 'key-1')).toBe('consumed');
      expect(await store.consume(record.approval_id, 'key-2')).toBe('already_consumed');
      expect(await store.consume('a_missing', 'key-1')).toBe('missing');
      expect(await store.get(record.approval_id)).toEqual({ record, consumedBy: 'key-1' });
    });
  });

  describe('keys used together', () => {
    it('writes an MCP task and its run’s task index in one transaction, as the front door does', async () => {
      const space = keys();
      const runId = `run-${randomUUID()}`;
      const replies = await a
        .multi()
        .set(space.mcpTask(runId, 'task_1'), '{}', 'PX', 10_000)
        .zadd(space.mcpTasksOfRun(runId), Date.now(), 'task_1')
        .pexpire(space.mcpTasksOfRun(runId), 10_000)
        .exec();
      expect(replies?.map(([error]) => error)).toEqual([null, null, null]);
      expect(await b.zrange(space.mcpTasksOfRun(runId), 0, -1)).toEqual(['task_1']);
    });
  });
});

describe('a three-node Redis Cluster', () => {
  const cluster = createRedis(REDIS_CLUSTER_URL, 'test-state-cluster');
  afterAll(async () => {
    await cluster.quit();
  });

  it('is what createRedis connects to for a URL with a cluster parameter, and spreads records over every node', async () => {
    expect(cluster).toBeInstanceOf(Cluster);
    if (!(cluster instanceof Cluster)) return;
    await cluster.ping();
    const masters = cluster.nodes('master');
    expect(masters).toHaveLength(3);
    const space = keys();
    const runs = new RunRegistry(cluster, space);
    const created = Array.from({ length: 30 }, () => run());
    await Promise.all(created.map((r) => runs.create(r)));
    // Asked directly, a node answers only for the slots it serves (MOVED for the others).
    const heldBy = async (node: RedisServer): Promise<number> => {
      const found = await Promise.all(created.map((r) => node.exists(space.run(r.run_id)).catch(() => 0)));
      return found.reduce((n, x) => n + x, 0);
    };
    const held = await Promise.all(masters.map(heldBy));
    expect(held.reduce((n, x) => n + x, 0)).toBe(30);
    expect(held.every((n) => n > 0)).toBe(true);
  });

  it('runs the scripts of one turn whose keys live on different nodes, each on its own node', async () => {
    const space = keys();
    const bump = new LuaScript(`return redis.call('INCR', KEYS[1])`);
    // Two calls per key, all made in one turn: the batcher sends one EVALSHA per hash slot.
    const counters = Array.from({ length: 24 }, (_, i) => space.run(`turn-${i}`));
    const replies = await Promise.all([...counters, ...counters].map((key) => bump.run(cluster, 1, key)));
    expect(replies).toEqual([...counters.map(() => 1), ...counters.map(() => 2)]);
    const slotOf = async (key: string): Promise<number> => (await cluster.call('CLUSTER', 'KEYSLOT', key)) as number;
    const slots = await Promise.all(counters.map(slotOf));
    // The keys spread over the cluster, so the turn did cross nodes.
    expect(new Set(slots.map((slot) => (cluster instanceof Cluster ? cluster.slots[slot]?.join(',') : ''))).size).toBe(3);
  });

  it('hashes a write’s tenant and run slot sets to one slot, and a task with its index', async () => {
    const space = keys();
    const slotOf = async (key: string): Promise<number> => (await cluster.call('CLUSTER', 'KEYSLOT', key)) as number;
    expect(await slotOf(space.clusterSlots('tenant:acme'))).toBe(await slotOf(space.clusterSlots('run:run-9')));
    expect(await slotOf(space.mcpTask('run-9', 'task_1'))).toBe(await slotOf(space.mcpTasksOfRun('run-9')));
  });
});
