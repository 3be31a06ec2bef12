import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AnswerScan,
  answerScanGroupPrefix,
  EventPublisher,
  EventSigner,
  generateSigningKey,
  KafkaAdmin,
  keyRing,
  parseSigningKey,
  parseTrustedKeys,
} from '@gatehouse/events';
import type { ToolResult } from '@gatehouse/events';
import { REPLY_PARTITION_HEADER } from '@gatehouse/telemetry';
import { resultCommandsOn, servicePublishing } from './support/results-reader.js';
import { sampleEvents } from './support/sample-events.js';
import { config, freshTopics, logger } from './support/stack.js';
import type { TestTopics } from './support/stack.js';

// An executor publishes its answers in Kafka transactions and commits each only while it still holds
// the command's claim, asked inside the transaction once the answer is in the log. A next owner's
// scan of the results must then see every answer that can ever commit: it waits for an open
// transaction, counts a committed answer and never an aborted one. These are the properties the
// ledger's model (packages/state/model, design (b)) assumes of Kafka.
describe('answers published in transactions', () => {
  const executorKey = generateSigningKey('executor-transactions');
  let env: TestTopics;
  let admin: KafkaAdmin;
  let scan: AnswerScan;
  const publishers: EventPublisher[] = [];
  let transactionalIds = 0;

  const answer = (commandId: string): ToolResult => ({ ...sampleEvents.results, command_id: commandId, completed_at: Date.now() });
  const toPartition = (partition: number) => ({ [REPLY_PARTITION_HEADER]: String(partition) });
  const transactionalId = (): string => `${env.topics.results}.test-executor-${transactionalIds++}`;

  async function publisherUnder(id: string, transactionTimeoutMs?: number): Promise<EventPublisher> {
    const publisher = await EventPublisher.connect(env.kafka, env.serde, new EventSigner(parseSigningKey(executorKey.signingKey)), {
      transactionalId: id,
      ...(transactionTimeoutMs === undefined ? {} : { transactionTimeoutMs }),
    });
    publishers.push(publisher);
    return publisher;
  }

  /** A condition the test decides, and a promise that settles once the publisher asks it: the record is then in the log. */
  function heldUntilDecided(): { holds: () => Promise<boolean>; asked: Promise<void>; decide: (holding: boolean) => void } {
    let asked: () => void = () => undefined;
    let decide: (holding: boolean) => void = () => undefined;
    const decision = new Promise<boolean>((resolve) => (decide = resolve));
    const askedOnce = new Promise<void>((resolve) => (asked = resolve));
    return {
      holds: () => {
        asked();
        return decision;
      },
      asked: askedOnce,
      decide,
    };
  }

  const commandsOn = (partition: number): Promise<string[]> => resultCommandsOn(env, admin, partition);

  /** Resolves once a scan's throwaway group exists: the scan has fixed the end it reads to and is reading. */
  async function scanReading(): Promise<void> {
    const prefix = answerScanGroupPrefix(env.topics.results);
    const deadline = Date.now() + 20_000;
    while (!(await admin.listGroups()).some((g) => g.startsWith(prefix))) {
      if (Date.now() > deadline) throw new Error('no answer scan started reading within 20 s');
    }
  }

  beforeAll(async () => {
    env = await freshTopics('answer-transactions', 3);
    admin = await KafkaAdmin.connect(env.kafka);
    const reference = await publisherUnder(transactionalId());
    scan = new AnswerScan({
      kafka: env.kafka,
      admin,
      serde: env.serde,
      trust: { keys: keyRing({ executor: parseTrustedKeys(executorKey.trustedKey) }) },
      publisher: reference,
      logger,
    });
  });

  afterAll(async () => {
    for (const publisher of publishers) await publisher.disconnect().catch(() => undefined);
    await admin?.close();
  });

  it('commits the records whose condition holds and not one whose condition was lost, in one batch', async () => {
    const publisher = await publisherUnder(transactionalId());
    const [kept, lost, plain] = [answer(`txn-kept-${Date.now()}`), answer(`txn-lost-${Date.now()}`), answer(`txn-plain-${Date.now()}`)];
    // Published in one turn: one batch, one transaction, which the lost condition aborts.
    const outcomes = await Promise.allSettled([
      publisher.publish('results', kept.run_id, kept, toPartition(0), () => Promise.resolve(true)),
      publisher.publish('results', lost.run_id, lost, toPartition(0), () => Promise.resolve(false)),
      publisher.publish('results', plain.run_id, plain, toPartition(0)),
    ]);
    const reasons = outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'published'));
    expect(
      outcomes.map((o) => o.status),
      reasons.join('; '),
    ).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'CLAIM_LOST', retryable: false });
    const seen = await commandsOn(0);
    expect(seen.filter((id) => [kept, lost, plain].some((a) => a.command_id === id)).sort()).toEqual(
      [kept.command_id, plain.command_id].sort(),
    );
  });

  it('sends in transactions only the topics it names: a lost condition holds back an answer, not an order', async () => {
    const publisher = await EventPublisher.connect(env.kafka, env.serde, new EventSigner(parseSigningKey(executorKey.signingKey)), {
      transactionalId: transactionalId(),
      transactionalTopics: [env.topics.results],
    });
    publishers.push(publisher);
    expect([publisher.inTransactions(env.topics.results), publisher.inTransactions(env.topics.execute)]).toEqual([true, false]);
    const lost = answer(`txn-named-${Date.now()}`);
    const outcomes = await Promise.allSettled([
      publisher.publish('results', lost.run_id, lost, toPartition(1), () => Promise.resolve(false)),
      publisher.publish('execute', sampleEvents.execute.command_id, sampleEvents.execute, undefined, () => Promise.resolve(false)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    expect((outcomes[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'CLAIM_LOST' });
    expect(await commandsOn(1)).not.toContain(lost.command_id);
  });

  it('has a service publish its answers plainly where the results topic has one replica', async () => {
    expect(await servicePublishing(config, env)).toEqual([false, false, false]);
  });

  it('keeps a transaction to one partition: one left open holds up neither another partition’s publishes nor their readers', async () => {
    const publisher = await publisherUnder(transactionalId());
    const [open, other] = [answer(`txn-open-${Date.now()}`), answer(`txn-other-${Date.now()}`)];
    const condition = heldUntilDecided();
    const stuck = publisher.publish('results', open.run_id, open, toPartition(0), condition.holds);
    await condition.asked;
    // Partition 0's transaction is open, its answer in the log: partition 1's answer commits in a
    // transaction of its own, and a read_committed reader of partition 1 sees it now.
    await publisher.publish('results', other.run_id, other, toPartition(1), () => Promise.resolve(true));
    expect(await commandsOn(1)).toContain(other.command_id);
    condition.decide(true);
    await stuck;
    expect(await commandsOn(0)).toContain(open.command_id);
  });

  it('makes a next owner’s scan wait for an open transaction and count it once committed', async () => {
    const publisher = await publisherUnder(transactionalId());
    const out = answer(`txn-wait-commit-${Date.now()}`);
    const condition = heldUntilDecided();
    const published = publisher.publish('results', out.run_id, out, toPartition(1), condition.holds);
    await condition.asked;
    // The answer is in the log, its transaction open: the scan fixes its end past it and reads.
    const verdict = scan.published(out.run_id, out, toPartition(1));
    await scanReading();
    condition.decide(true);
    await published;
    expect(await verdict).toBe('published');
  });

  it('makes a next owner’s scan wait for an open transaction and not count it once aborted', async () => {
    const publisher = await publisherUnder(transactionalId());
    const out = answer(`txn-wait-abort-${Date.now()}`);
    const condition = heldUntilDecided();
    const published = publisher.publish('results', out.run_id, out, toPartition(1), condition.holds);
    await condition.asked;
    const verdict = scan.published(out.run_id, out, toPartition(1));
    await scanReading();
    condition.decide(false);
    await expect(published).rejects.toMatchObject({ code: 'CLAIM_LOST' });
    expect(await verdict).toBe('absent');
    expect(await commandsOn(1)).not.toContain(out.command_id);
  });

  it('lets a publisher started again under the same id abort its predecessor’s open transaction at once', async () => {
    const id = transactionalId();
    const predecessor = await publisherUnder(id);
    const stalled = answer(`txn-stalled-${Date.now()}`);
    const condition = heldUntilDecided();
    const stalledPublish = predecessor.publish('results', stalled.run_id, stalled, toPartition(2), condition.holds);
    await condition.asked;
    // The successor's first transaction fences the predecessor's producer and aborts its open one:
    // a reader of the partition does not wait out the transaction's timeout.
    const successor = await publisherUnder(id);
    const next = answer(`txn-successor-${Date.now()}`);
    await successor.publish('results', next.run_id, next, toPartition(2), () => Promise.resolve(true));
    expect(await commandsOn(2)).toEqual(expect.arrayContaining([next.command_id]));
    // The stalled one's condition still holds when it wakes, but its transaction is gone.
    condition.decide(true);
    await expect(stalledPublish).rejects.toBeDefined();
    const seen = await commandsOn(2);
    expect(seen).toContain(next.command_id);
    expect(seen).not.toContain(stalled.command_id);
  });

  it('has the broker abort a transaction left open past its timeout: nothing of it commits, and its batch goes again only if its condition, asked again, holds', async () => {
    const publisher = await publisherUnder(transactionalId(), 1_000);
    const [late, lost] = [answer(`txn-late-${Date.now()}`), answer(`txn-late-lost-${Date.now()}`)];
    // The owner stalls inside its transaction until a reader of the partition has gone past it,
    // which it can only once the broker has aborted the transaction on its timeout. Its commit is
    // then answered PRODUCER_FENCED: nothing committed, so the batch goes again in a new transaction.
    let asked = 0;
    let firstRead: string[] = [];
    await publisher.publish('results', late.run_id, late, toPartition(0), async () => {
      asked += 1;
      if (asked === 1) firstRead = await commandsOn(0);
      return true;
    });
    expect(asked).toBe(2);
    expect(firstRead).not.toContain(late.command_id);
    expect((await commandsOn(0)).filter((id) => id === late.command_id)).toHaveLength(1);

    // The same, but the claim is lost by the time the condition is asked again: nothing commits.
    let askedLost = 0;
    const published = publisher.publish('results', lost.run_id, lost, toPartition(0), async () => {
      askedLost += 1;
      if (askedLost === 1) await commandsOn(0);
      return askedLost === 1;
    });
    await expect(published).rejects.toMatchObject({ code: 'CLAIM_LOST' });
    expect(askedLost).toBe(2);
    expect(await commandsOn(0)).not.toContain(lost.command_id);
  });

  it('keeps a transaction open as long as its own timeout says, past the wire client’s request timeout (5 s)', async () => {
    const publisher = await publisherUnder(transactionalId(), 20_000);
    const slow = answer(`txn-slow-${Date.now()}`);
    // A slow owner: its condition answers after 6.5 s, inside its 20 s but past the 5 s the wire
    // client would have asked for, after which the broker would have aborted it.
    await publisher.publish('results', slow.run_id, slow, toPartition(1), async () => {
      await new Promise((resolve) => setTimeout(resolve, 6_500));
      return true;
    });
    expect(await commandsOn(1)).toContain(slow.command_id);
  });
});
