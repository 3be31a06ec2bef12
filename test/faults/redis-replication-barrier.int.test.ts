import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalStore, createRedis, ClaimLedger, Keyspace, ProposalStore, ReplicationUnconfirmed } from '@gatehouse/state';
import type { Claim, Redis } from '@gatehouse/state';
import {
  awaitFailover,
  cutRedisReplicas,
  killRedisMaster,
  redisHaDown,
  redisHaUp,
  redisShardOf,
  restartRedisNode,
} from '../support/cluster-control.js';
import { sampleApproval, sampleProposal } from '../support/approval-records.js';
import { pollUntil } from '../support/poll.js';

// Redis replicates asynchronously: a claim its master acknowledged is lost when a replica that never
// received it is promoted, and a second owner then claims the key afresh and runs the write again.
// A durable record (GATEHOUSE_REDIS_WAIT_REPLICAS) counts only once a replica holds it. Here the
// replica is cut off on purpose (stopped, its link dropped), so the window is open every run.
describe('the replication barrier on claims and staged answers, across a Redis failover', () => {
  const keys = new Keyspace(`barrier-${randomUUID().slice(0, 8)}:`);
  let plain: Redis;
  let durable: Redis;
  let plainStore: ClaimLedger;
  let durableStore: ClaimLedger;

  beforeAll(async () => {
    const url = await redisHaUp();
    plain = createRedis(url, 'barrier-test-plain');
    durable = createRedis(url, 'barrier-test-durable', undefined, { replicas: 1, timeoutMs: 300 });
    plainStore = new ClaimLedger(plain, keys);
    durableStore = new ClaimLedger(durable, keys);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([plain?.quit(), durable?.quit()]);
    await redisHaDown();
  }, 180_000);

  /** `count` keys whose records live on the same master, with that master's port. */
  async function keysOnOneMaster(count: number): Promise<{ master: number; names: string[] }> {
    const first = `k-${randomUUID()}`;
    const { master } = await redisShardOf(keys.idempotency(first));
    const names = [first];
    while (names.length < count) {
      const name = `k-${randomUUID()}`;
      if ((await redisShardOf(keys.idempotency(name))).master === master) names.push(name);
    }
    return { master, names };
  }

  /** What a durable call answers once a replica confirms it: undefined while none does, so a poll retries. */
  const whenConfirmed = <T>(call: Promise<T>): Promise<T | undefined> =>
    call.catch((error: unknown) => {
      if (error instanceof ReplicationUnconfirmed) return undefined;
      throw error;
    });

  /**
   * A durable call made before a test cuts the replicas, once a replica confirms it: a run before
   * this one may have failed a master over and restarted it as a replica, which is still catching
   * up (its master then confirms nothing for a while).
   */
  const confirmed = <T>(call: () => Promise<T>, what: string): Promise<T> =>
    pollUntil(() => whenConfirmed(call()), 60_000, `a replica to confirm ${what}`, 100);

  /** A claim once the cluster routes the key again (after a failover the client learns the new layout). */
  const claimWhenRouted = (store: ClaimLedger, key: string, owner: string): Promise<Claim> =>
    pollUntil(() => store.claim(key, 'h', owner, 60_000).catch(() => undefined), 30_000, `a claim of ${key} to be answered`, 100);

  it('refuses a durable claim no replica holds, as retryable, while a plain call of the same turn goes through', async () => {
    const {
      master,
      names: [held = '', refused = ''],
    } = await keysOnOneMaster(2);
    expect(await confirmed(() => durableStore.claim(held, 'h', 'exec-a', 60_000), 'the first claim')).toEqual({ kind: 'claimed' });
    const resume = await cutRedisReplicas(master);
    let claim: PromiseSettledResult<Claim>;
    let renew: PromiseSettledResult<boolean>;
    try {
      // One turn: the batcher sends both in one script, then WAIT; only the durable call needs it.
      [claim, renew] = await Promise.allSettled([
        durableStore.claim(refused, 'h', 'exec-a', 60_000),
        durableStore.renew(held, 'exec-a', 60_000),
      ]);
    } finally {
      resume();
    }
    expect(renew).toEqual({ status: 'fulfilled', value: true });
    expect(claim.status).toBe('rejected');
    const reason = (claim as PromiseRejectedResult).reason as unknown;
    expect(reason).toBeInstanceOf(ReplicationUnconfirmed);
    expect(reason).toMatchObject({ acknowledged: 0, required: 1 });
    // Retryable: once the replica is back, the same owner's claim again is confirmed.
    expect(
      await pollUntil(
        () => whenConfirmed(durableStore.claim(refused, 'h', 'exec-a', 60_000)),
        30_000,
        'the replica to confirm the claim again',
      ),
    ).toEqual({ kind: 'claimed' });
  }, 120_000);

  it("gives an operator's resolution that no replica confirmed, sent again, the outcome it stored the first time", async () => {
    const {
      master,
      names: [key = ''],
    } = await keysOnOneMaster(1);
    expect(await confirmed(() => durableStore.claim(key, 'h', 'exec-a', 60_000), 'the claim')).toEqual({ kind: 'claimed' });
    expect(await durableStore.settle(key, 'exec-a', 'unknown', '{"code":"OUTCOME_UNKNOWN"}')).toBe(true);
    const resolution = { state: 'succeeded', outcome: '{"completed_at":1}', by: 'ops@acme', fingerprint: 'f1' } as const;
    const resume = await cutRedisReplicas(master);
    try {
      await expect(durableStore.resolveUnknown(key, resolution)).rejects.toBeInstanceOf(ReplicationUnconfirmed);
    } finally {
      resume();
    }
    // The retry builds its answer afresh (a new completed_at); the one stored the first time is the one published.
    const retried = await pollUntil(
      () => whenConfirmed(durableStore.resolveUnknown(key, { ...resolution, outcome: '{"completed_at":2}' })),
      30_000,
      'the replica to confirm the resolution',
    );
    expect(retried).toEqual({ kind: 'resolved', outcome: '{"completed_at":1}' });
    await durableStore.resolutionPublished(key);
    expect(await durableStore.resolveUnknown(key, resolution)).toEqual({ kind: 'not_unknown' });
  }, 120_000);

  it('counts a proposal or an approval used only once a replica holds the use, and lets the same key ask again', async () => {
    // A use only the master acknowledged could vanish in a failover, and another key use the
    // proposal again: the write it approves would run twice.
    const proposal = sampleProposal();
    const { master } = await redisShardOf(keys.proposal(proposal.proposal_id));
    let approvalId = `a_${randomUUID().slice(0, 8)}`;
    while ((await redisShardOf(keys.approval(approvalId))).master !== master) approvalId = `a_${randomUUID().slice(0, 8)}`;
    const approval = sampleApproval(proposal.proposal_id, Date.now(), approvalId);
    const proposals = new ProposalStore(durable, keys);
    const approvals = new ApprovalStore(durable, keys);
    await proposals.save(proposal);
    await approvals.save(approval);
    const resume = await cutRedisReplicas(master);
    try {
      await expect(approvals.consume(approvalId, 'key-1')).rejects.toBeInstanceOf(ReplicationUnconfirmed);
      await expect(proposals.consume(proposal.proposal_id, 'key-1')).rejects.toBeInstanceOf(ReplicationUnconfirmed);
    } finally {
      resume();
    }
    expect(await pollUntil(() => whenConfirmed(approvals.consume(approvalId, 'key-1')), 30_000, 'the approval’s use confirmed')).toBe(
      'consumed',
    );
    expect(
      await pollUntil(() => whenConfirmed(proposals.consume(proposal.proposal_id, 'key-1')), 30_000, 'the proposal’s use confirmed'),
    ).toBe('consumed');
    expect(await approvals.consume(approvalId, 'key-2')).toBe('already_consumed');
    expect(await proposals.consume(proposal.proposal_id, 'key-2')).toBe('already_consumed');
  }, 120_000);

  it('keeps through a failover every claim it confirmed, where a claim only the master acknowledged is lost', async () => {
    const {
      master,
      names: [kept = '', lost = '', unconfirmed = ''],
    } = await keysOnOneMaster(3);
    expect(await confirmed(() => durableStore.claim(kept, 'h', 'exec-a', 60_000), 'the kept claim')).toEqual({ kind: 'claimed' });
    const resume = await cutRedisReplicas(master);
    try {
      expect(await plainStore.claim(lost, 'h', 'exec-a', 60_000)).toEqual({ kind: 'claimed' });
      await expect(durableStore.claim(unconfirmed, 'h', 'exec-a', 60_000)).rejects.toBeInstanceOf(ReplicationUnconfirmed);
      await killRedisMaster(master);
    } finally {
      resume();
    }
    const promoted = await awaitFailover(master);
    expect(promoted).not.toBe(master);
    // The confirmed claim survived: a second owner waits for its owner.
    expect(await claimWhenRouted(plainStore, kept, 'exec-b')).toMatchObject({ kind: 'in_progress', owner: 'exec-a' });
    // The hole a plain claim leaves: acknowledged, then gone, and a second owner holds the key too.
    expect(await claimWhenRouted(plainStore, lost, 'exec-b')).toEqual({ kind: 'claimed' });
    // The claim the barrier refused is gone as well, but its owner never acted on it.
    expect(await claimWhenRouted(plainStore, unconfirmed, 'exec-b')).toEqual({ kind: 'claimed' });
    await restartRedisNode(master);
  }, 180_000);
});
