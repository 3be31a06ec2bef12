import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaimLedger, createRedis, Keyspace, recordLedgerSteps, redisUrlFromEnv } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { checkLedgerHistory, ledgerHistoryFile } from './support/ledger-history.js';
import type { Failover, RecordedStep } from './support/ledger-history.js';
import { pollUntil } from './support/poll.js';

// The history check of the fault tests, on a history the real ledger made: two owners of one
// command's entry (the first stops after staging, the second takes over and repeats its answer),
// a write key given back and claimed afresh, and an operator's resolution. Then the same history
// doctored, as a ledger that broke its rules would have written it.
describe('a ledger history checked against the protocol model', () => {
  let a: Redis;
  let b: Redis;
  let path: string;

  beforeAll(async () => {
    a = createRedis(redisUrlFromEnv(), 'test-history-a');
    b = createRedis(redisUrlFromEnv(), 'test-history-b');
    path = ledgerHistoryFile('history-check');
    const stop = recordLedgerSteps(path, 'test process');
    try {
      const space = new Keyspace(`t-${randomUUID().slice(0, 8)}:`);
      const [one, two] = [new ClaimLedger(a, space), new ClaimLedger(b, space)];
      // A lease long enough that the second owner's first claim finds it live on a busy machine.
      const terms = { argumentsSha256: 'h', leaseMs: 1_000, commandId: 'c-1' };
      const answer = '{"status":"ok","result":"{}"}';
      // The first owner stages its answer and stops; the second finds it staged and repeats it.
      expect(await one.claim('cmd:r:c-1', 'h', 'exec-a/1', 1_000, 'c-1')).toEqual({ kind: 'claimed' });
      expect(await one.stage('cmd:r:c-1', 'exec-a/1', answer, terms)).toBe('staged');
      expect((await two.claim('cmd:r:c-1', 'h', 'exec-b/1', 100, 'c-1')).kind).toBe('in_progress');
      await pollUntil(
        async () => ((await two.claim('cmd:r:c-1', 'h', 'exec-b/1', 60_000, 'c-1')).kind === 'orphaned' ? true : undefined),
        5_000,
        'the lease to run out',
      );
      expect(await two.settle('cmd:r:c-1', 'exec-b/1', 'succeeded', answer)).toBe(true);
      expect(await one.settle('cmd:r:c-1', 'exec-a/1', 'succeeded', answer)).toBe(false);
      expect((await one.claim('cmd:r:c-1', 'h', 'exec-a/2', 60_000, 'c-1')).kind).toBe('settled');
      // A write key given back (nothing ran), claimed afresh, handed to an operator, resolved.
      expect(await one.claim('key-1', 'h', 'exec-a/3', 60_000, 'c-1')).toEqual({ kind: 'claimed' });
      expect(await one.giveBack('key-1', 'exec-a/3')).toBe(true);
      expect(await two.claim('key-1', 'h', 'exec-b/2', 60_000, 'c-1')).toEqual({ kind: 'claimed' });
      expect(await two.renew('key-1', 'exec-b/2', 60_000)).toBe(true);
      expect(await two.settle('key-1', 'exec-b/2', 'unknown', '{"status":"error"}')).toBe(true);
      const resolution = { state: 'succeeded', outcome: answer, by: 'ops@acme', fingerprint: 'r1' } as const;
      expect((await one.resolveUnknown('key-1', resolution)).kind).toBe('resolved');
      await one.resolutionPublished('key-1');
      expect((await two.claim('key-1', 'h', 'exec-b/3', 60_000, 'c-1')).kind).toBe('settled');
    } finally {
      stop();
    }
  }, 30_000);

  afterAll(async () => {
    await Promise.all([a.quit(), b.quit()]);
  });

  it('allows every step the ledger took', async () => {
    const check = await checkLedgerHistory(path);
    expect(check.refused).toBeUndefined();
    expect(check.entries).toBe(2);
    expect(check.steps).toBeGreaterThanOrEqual(15);
  });

  it('refuses a history in which a second owner claims an entry afresh while the first holds it, naming that step', async () => {
    const steps = readFileSync(path, 'utf8').trim().split('\n');
    const forged = ledgerHistoryFile('history-forged');
    writeFileSync(forged, `${steps.join('\n')}\n`);
    // As if the write key's entry had been claimed by someone else while exec-b/2 held it.
    const held = steps.map((line) => JSON.parse(line) as RecordedStep).find((s) => s.op === 'renew' && s.reply === 'done');
    if (held === undefined) throw new Error('no renewal recorded');
    appendFileSync(forged, `${JSON.stringify({ ...held, op: 'claim', owner: 'intruder/1', reply: 'claimed', process: 'forger' })}\n`);
    const check = await checkLedgerHistory(forged);
    expect(check.refused?.entry).toBe(held.entry);
    expect(check.refused?.ledger).toMatch(/^recorded claim → claimed, the model answers /);
    expect(check.refused?.steps.at(-1)).toMatch(/^claim intruder\/1 → claimed/);
  });

  it('refuses a history in which a taken-over entry repeats another answer than the one staged', async () => {
    const steps = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as RecordedStep);
    const forged = ledgerHistoryFile('history-other-answer');
    writeFileSync(
      forged,
      steps
        .map((s) => (s.op === 'claim' && s.reply === 'orphaned' ? { ...s, answer: 'f'.repeat(64) } : s))
        .map((s) => JSON.stringify(s))
        .join('\n') + '\n',
    );
    const check = await checkLedgerHistory(forged);
    expect(check.refused?.ledger).toMatch(/another answer/);
  });

  it('checks an entry only up to a step whose process was killed before recording it, and says so', async () => {
    const steps = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as RecordedStep);
    // As if exec-b/1 had been killed while its settlement's reply was on the way: its attempt is
    // there, its step is not, and the later claim that found the command settled follows it.
    const lost = steps.findIndex((s) => s.op === 'settle' && s.owner === 'exec-b/1' && s.reply === 'done');
    expect(lost).toBeGreaterThan(0);
    const forged = ledgerHistoryFile('history-killed');
    const writeWithout = (file: string, leftOut: readonly number[]): void =>
      writeFileSync(
        file,
        `${steps
          .filter((_, i) => !leftOut.includes(i))
          .map((s) => JSON.stringify(s))
          .join('\n')}\n`,
      );
    writeWithout(forged, [lost]);
    const check = await checkLedgerHistory(forged);
    expect(check.refused).toBeUndefined();
    expect(check.cut).toBe(1);
    // Without its attempt the lost step is not known to be missing, and the later claim is refused.
    const withoutAttempt = ledgerHistoryFile('history-killed-unnoted');
    const attemptOf = steps.findIndex((s) => s.op === 'settle' && s.owner === 'exec-b/1' && s.reply === 'attempted');
    writeWithout(withoutAttempt, [lost, attemptOf]);
    expect((await checkLedgerHistory(withoutAttempt)).refused?.ledger).toMatch(/^recorded claim → stored/);
  });
  describe('across a Redis failover', () => {
    /**
     * A failover as one entry sees it: the new master holds `replica` (the entry as its master's
     * replica last had it, taken with DUMP), and every step recorded before comes before the kill,
     * every step after comes after the promotion.
     */
    async function failOver(entry: string, replica: Buffer | null): Promise<Failover> {
      const killedAt = Date.now() + 0.5;
      if (replica === null) throw new Error('the entry was not there to copy');
      await a.restore(entry, 0, replica, 'REPLACE');
      const promotedAt = Date.now() + 0.5;
      await pollUntil(() => Promise.resolve(Date.now() > promotedAt ? true : undefined), 1_000, 'the next millisecond');
      return { killedAt, promotedAt };
    }

    it('allows a settlement the promoted replica never received, and names the steps taken back', async () => {
      const space = new Keyspace(`t-${randomUUID().slice(0, 8)}:`);
      const file = ledgerHistoryFile('failover-settle');
      const ledger = new ClaimLedger(a, space);
      const entry = space.idempotency('key-settle');
      const stop = recordLedgerSteps(file, 'test process');
      let failover: Failover;
      try {
        expect(await ledger.claim('key-settle', 'h', 'exec-a/1', 60_000, 'c-1')).toEqual({ kind: 'claimed' });
        // What the replica holds: the claim (durable), not the settlement after it.
        const replica = await a.dumpBuffer(entry);
        expect(await ledger.settle('key-settle', 'exec-a/1', 'succeeded', '{"status":"ok"}')).toBe(true);
        failover = await failOver(entry, replica);
        // After the failover the entry is in flight under exec-a/1 again: another owner finds it so,
        // and its owner can settle it (again, as far as its own steps go).
        expect((await ledger.claim('key-settle', 'h', 'exec-b/1', 60_000, 'c-1')).kind).toBe('in_progress');
        expect(await ledger.settle('key-settle', 'exec-a/1', 'failed', '{"status":"error"}')).toBe(true);
      } finally {
        stop();
      }
      const check = await checkLedgerHistory(file, failover);
      expect(check.refused).toBeUndefined();
      expect(check.takenBack).toEqual({ entries: 1, steps: 1 });
      // Read as one ledger with nothing taken back, the same history is refused.
      expect((await checkLedgerHistory(file)).refused?.ledger).toMatch(/^recorded settle → settled, the model answers /);
    });

    it('refuses a history in which the failover took back a stage a replica had confirmed', async () => {
      const space = new Keyspace(`t-${randomUUID().slice(0, 8)}:`);
      const file = ledgerHistoryFile('failover-stage');
      const ledger = new ClaimLedger(a, space);
      const entry = space.idempotency('key-stage');
      const terms = { argumentsSha256: 'h', leaseMs: 100, commandId: 'c-1' };
      const stop = recordLedgerSteps(file, 'test process');
      let failover: Failover;
      try {
        expect(await ledger.claim('key-stage', 'h', 'exec-a/1', 100, 'c-1')).toEqual({ kind: 'claimed' });
        const replica = await a.dumpBuffer(entry);
        // A stage is durable: a failover cannot take it back, so losing it is a broken barrier.
        expect(await ledger.stage('key-stage', 'exec-a/1', '{"status":"ok"}', terms)).toBe('staged');
        failover = await failOver(entry, replica);
        await pollUntil(
          async () => ((await ledger.claim('key-stage', 'h', 'exec-b/1', 60_000, 'c-1')).kind === 'orphaned' ? true : undefined),
          5_000,
          'the lease to run out',
        );
      } finally {
        stop();
      }
      const check = await checkLedgerHistory(file, failover);
      expect(check.refused?.ledger).toMatch(/^recorded claim → orphaned, the model answers /);
    });
  });
});
