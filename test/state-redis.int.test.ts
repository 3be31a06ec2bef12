import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedis, IdempotencyStore, isActive, Keyspace, LuaScript, ProposalStore, RateLimiter, redisUrlFromEnv, ResourceLock, RunRegistry, SlotPool } from '@gatehouse/state';
import type { Proposal, Run } from '@gatehouse/state';

const url = redisUrlFromEnv();
const a = createRedis(url, 'test-state-a');
const b = createRedis(url, 'test-state-b');
/** Alternates between instances, as two processes would. */
function either<T>(items: readonly T[], i: number): T {
  return items[i % items.length] as T;
}
const keys = () => new Keyspace(`t-${randomUUID().slice(0, 8)}:`);

afterAll(async () => {
  await a.quit();
  await b.quit();
});

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
});

describe('RateLimiter', () => {
  it('allows exactly the limit across two instances racing, and tells the rest when to retry', async () => {
    const space = keys();
    const limiters = [new RateLimiter(a, space), new RateLimiter(b, space)];
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => either(limiters, i).take('get_customer.v1', 'tenant:acme', { limit: 7, windowMs: 10_000 }, `call-${i}`)),
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

describe('IdempotencyStore', () => {
  it('runs a key once and answers every later claim with the stored outcome', async () => {
    const store = new IdempotencyStore(a, keys());
    expect(await store.claim('run9:p_7f31:commit', 'h1', 'exec-1', 5_000)).toEqual({ kind: 'claimed' });
    expect(await store.claim('run9:p_7f31:commit', 'h1', 'exec-2', 5_000)).toMatchObject({ kind: 'in_progress', owner: 'exec-1' });
    expect(await store.finish('run9:p_7f31:commit', 'exec-2', 'succeeded', 'wrong owner')).toBe(false);
    expect(await store.finish('run9:p_7f31:commit', 'exec-1', 'succeeded', '{"new_version":18}')).toBe(true);
    expect(await store.claim('run9:p_7f31:commit', 'h1', 'exec-3', 5_000)).toEqual({
      kind: 'stored',
      state: 'succeeded',
      outcome: '{"new_version":18}',
    });
    expect(await store.claim('run9:p_7f31:commit', 'h2', 'exec-3', 5_000)).toEqual({ kind: 'reused' });
    expect(await store.get('run9:p_7f31:commit')).toMatchObject({ state: 'succeeded', arguments_sha256: 'h1', owner: 'exec-1' });
  });

  it('hands a key whose owner died to exactly one new owner as orphaned, never as a fresh claim', async () => {
    const store = new IdempotencyStore(a, keys());
    await store.claim('k', 'h', 'dead-exec', 30);
    let first: Awaited<ReturnType<IdempotencyStore['claim']>> | undefined;
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
    const store = new IdempotencyStore(a, space);
    expect(await store.claim('cmd:c-1', 'h', 'dead-exec', 30, 'c-1')).toEqual({ kind: 'claimed' });
    expect(await store.claim('cmd:c-1', 'h', 'exec-2', 5_000, 'c-1')).toMatchObject({ kind: 'in_progress', owner: 'dead-exec', commandId: 'c-1' });
    expect(await store.stage('cmd:c-1', 'exec-2', '{"status":"ok"}')).toBe(false);
    expect(await store.stage('cmd:c-1', 'dead-exec', '{"status":"ok"}')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(await store.claim('cmd:c-1', 'h', 'exec-2', 5_000, 'c-1')).toEqual({ kind: 'orphaned', previousOwner: 'dead-exec', staged: '{"status":"ok"}' });
    expect(await store.finish('cmd:c-1', 'exec-2', 'succeeded', 'ok')).toBe(true);
    expect(await a.hexists(space.idempotency('cmd:c-1'), 'staged')).toBe(0);
    expect(await store.claim('cmd:c-1', 'h', 'exec-3', 5_000, 'c-1')).toEqual({ kind: 'stored', state: 'succeeded', outcome: 'ok' });
  });

  it('keeps an unknown outcome until an operator resolves it', async () => {
    const store = new IdempotencyStore(a, keys());
    await store.claim('u', 'h', 'exec-1', 5_000);
    await store.finish('u', 'exec-1', 'unknown', '{"code":"OUTCOME_UNKNOWN"}');
    expect(await store.claim('u', 'h', 'exec-2', 5_000)).toEqual({ kind: 'unknown', outcome: '{"code":"OUTCOME_UNKNOWN"}' });
    expect(await store.resolveUnknown('u', 'succeeded', '{"new_version":18}', 'ops@acme')).toBe('resolved');
    expect(await store.resolveUnknown('u', 'failed', '{}', 'ops@acme')).toBe('not_unknown');
    expect(await store.resolveUnknown('missing', 'failed', '{}', 'ops@acme')).toBe('not_found');
    expect(await store.claim('u', 'h', 'exec-2', 5_000)).toEqual({ kind: 'stored', state: 'succeeded', outcome: '{"new_version":18}' });
  });
});

describe('SlotPool', () => {
  it('never grants more leases than the limit of any scope, across instances', async () => {
    const space = keys();
    const pools = [new SlotPool(a, space), new SlotPool(b, space)];
    const scopes = [{ scope: 'tenant:acme', limit: 4 }, { scope: 'run:r1', limit: 10 }];
    const got = await Promise.all(Array.from({ length: 20 }, (_, i) => either(pools, i).tryAcquire(scopes, `lease-${i}`, 10_000)));
    expect(got.filter(Boolean)).toHaveLength(4);
    expect(await pools[0]?.inUse('tenant:acme')).toBe(4);
    expect(await pools[0]?.inUse('run:r1')).toBe(4);
    const holder = got.findIndex(Boolean);
    await pools[0]?.release(scopes, `lease-${holder}`);
    expect(await pools[1]?.tryAcquire(scopes, 'late', 10_000)).toBe(true);
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
      // Never loaded: EVALSHA answers NOSCRIPT and the text goes over once.
      expect((await uncached.script('EXISTS', script.sha1)) as number[]).toEqual([0]);
      const first = (await script.run(uncached, 1, 'k', 'v')) as string[];
      expect(first.slice(0, 2)).toEqual(['k', 'v']);
      expect((await uncached.script('EXISTS', script.sha1)) as number[]).toEqual([1]);
      // As after a restart: the cache is empty again, and the call still succeeds.
      await uncached.script('FLUSH');
      expect((await script.run(uncached, 1, 'k2', 'v2')) as string[]).toEqual(['k2', 'v2', first[2]]);
      // And the idempotency protocol keeps working across the flush.
      const store = new IdempotencyStore(a, keys());
      await a.script('FLUSH');
      expect(await store.claim('op-1', 'sha', 'owner-1', 5_000)).toEqual({ kind: 'claimed' });
      expect(await store.finish('op-1', 'owner-1', 'succeeded', 'ok')).toBe(true);
    } finally {
      await uncached.quit();
    }
  });
});

describe('ProposalStore', () => {
  it('is consumed once: the same key may ask again, another key is refused, and a release re-opens it', async () => {
    const store = new ProposalStore(a, keys());
    const now = Date.now();
    const proposal: Proposal = {
      proposal_id: `p_${randomUUID().slice(0, 8)}`,
      tool: 'commit_address_change.v2',
      arguments: '{}',
      arguments_sha256: 'h',
      target: { type: 'customer', id: 'C-1', version: 1 },
      effect: 'test',
      diff: { changes: [], recipients: [], amount: null, affected_records: 1, irreversible: [] },
      environment: 'sandbox',
      run_id: 'run-1',
      tenant: 'acme',
      principal: 'agent:a',
      created_at: now,
      expires_at: now + 60_000,
    };
    await store.save(proposal);
    expect(await store.consume(proposal.proposal_id, 'key-1')).toBe('consumed');
    expect(await store.consume(proposal.proposal_id, 'key-1')).toBe('consumed');
    expect(await store.consume(proposal.proposal_id, 'key-2')).toBe('already_consumed');
    expect(await store.release(proposal.proposal_id, 'key-2')).toBe(false);
    expect(await store.release(proposal.proposal_id, 'key-1')).toBe(true);
    expect(await store.consume(proposal.proposal_id, 'key-2')).toBe('consumed');
    expect(await store.consume('p_missing', 'key-1')).toBe('missing');
  });
});

