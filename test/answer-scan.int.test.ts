import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AnswerScan,
  EventPublisher,
  EventSigner,
  generateSigningKey,
  KafkaAdmin,
  keyRing,
  parseSigningKey,
  parseTrustedKeys,
} from '@gatehouse/events';
import type { ToolResult } from '@gatehouse/events';
import { createLogger, REPLY_PARTITION_HEADER } from '@gatehouse/telemetry';
import { sampleEvents } from './support/sample-events.js';
import { freshTopics, logger } from './support/stack.js';
import type { TestTopics } from './support/stack.js';

// Before an executor publishes again an answer a stopped executor staged, it reads the results
// topic: the stopped one may have published it and died before marking it published. The scan must
// find every trusted answer there is, and never be silenced by a record no trusted key signed.
describe('the scan of the results topic for an answer already out', () => {
  const executorKey = generateSigningKey('executor-scan');
  const strangerKey = generateSigningKey('executor-stranger');
  let env: TestTopics;
  let admin: KafkaAdmin;
  let publisher: EventPublisher;
  let forger: EventPublisher;
  let scan: AnswerScan;
  const lines: string[] = [];

  const answer = (commandId: string, overrides: Partial<ToolResult> = {}): ToolResult => ({
    ...sampleEvents.results,
    command_id: commandId,
    completed_at: Date.now(),
    ...overrides,
  });
  // The partition an agent instance reads: the executor routes the answer there.
  const toPartition = (partition: number) => ({ [REPLY_PARTITION_HEADER]: String(partition) });

  beforeAll(async () => {
    env = await freshTopics('answer-scan', 3);
    admin = await KafkaAdmin.connect(env.kafka);
    publisher = await EventPublisher.connect(env.kafka, env.serde, new EventSigner(parseSigningKey(executorKey.signingKey)));
    forger = await EventPublisher.connect(env.kafka, env.serde, new EventSigner(parseSigningKey(strangerKey.signingKey)));
    scan = new AnswerScan({
      kafka: env.kafka,
      admin,
      serde: env.serde,
      trust: { keys: keyRing({ executor: parseTrustedKeys(executorKey.trustedKey) }) },
      publisher: publisher,
      // Each read logs one line: the test counts reads by them.
      logger: createLogger('answer-scan-test', { level: 'info', destination: { write: (line: string) => void lines.push(line) } }),
    });
  });

  afterAll(async () => {
    await forger?.disconnect();
    await publisher?.disconnect();
    await admin?.close();
  });

  it('finds an answer published on the partition it was routed to, and not one never published', async () => {
    const out = answer(`scan-out-${Date.now()}`);
    await publisher.publish('results', out.run_id, out, toPartition(1));
    expect(await scan.published(out.run_id, out, toPartition(1))).toBe('published');
    const never = answer(`scan-never-${Date.now()}`);
    expect(await scan.published(never.run_id, never, toPartition(1))).toBe('absent');
  });

  it('does not take another answer to the command for this one: a pending notice is not the final answer', async () => {
    const commandId = `scan-pending-${Date.now()}`;
    const pending = answer(commandId, { status: 'pending_approval', error: null, completed_at: Date.now() - 5_000 });
    await publisher.publish('results', pending.run_id, pending, toPartition(1));
    const final = answer(commandId, { status: 'ok', error: null, result: '{}' });
    expect(await scan.published(final.run_id, final, toPartition(1))).toBe('absent');
    // A repeated answer is the same answer, down to when it completed: one a millisecond later is another.
    const other = { ...final, completed_at: Number(final.completed_at) + 1 };
    await publisher.publish('results', other.run_id, other, toPartition(1));
    expect(await scan.published(final.run_id, final, toPartition(1))).toBe('absent');
    await publisher.publish('results', final.run_id, final, toPartition(1));
    expect(await scan.published(final.run_id, final, toPartition(1))).toBe('published');
  });

  it('is not silenced by a record of the command that no trusted key signed', async () => {
    const real = answer(`scan-forged-${Date.now()}`);
    await forger.publish('results', real.run_id, real, toPartition(2));
    expect(await scan.published(real.run_id, real, toPartition(2))).toBe('absent');
    await publisher.publish('results', real.run_id, real, toPartition(2));
    expect(await scan.published(real.run_id, real, toPartition(2))).toBe('published');
  });

  it('answers many questions about one partition with few reads, each rightly', async () => {
    const published = Array.from({ length: 20 }, (_, i) => answer(`scan-many-out-${i}-${Date.now()}`));
    const missing = Array.from({ length: 20 }, (_, i) => answer(`scan-many-missing-${i}-${Date.now()}`));
    await publisher.publishMany(
      'results',
      published.map((event) => ({ key: event.run_id, event, headers: toPartition(0) })),
    );
    const readsBefore = lines.length;
    const verdicts = await Promise.all([...published, ...missing].map((r) => scan.published(r.run_id, r, toPartition(0))));
    expect(verdicts).toEqual([...published.map(() => 'published'), ...missing.map(() => 'absent')]);
    // The first question starts a read; the 39 that arrive while it runs share the next one.
    expect(lines.length - readsBefore).toBeLessThanOrEqual(2);
  });

  it('reads nothing it need not: an answer completed after every record of its partition finds an empty stretch', async () => {
    const late = answer(`scan-late-${Date.now()}`, { completed_at: Date.now() + 10 * 60_000 });
    expect(await scan.published(late.run_id, late, toPartition(1))).toBe('absent');
    expect(lines.at(-1)).toMatch(/"records":0/);
  });

  it('says unscanned, so the caller publishes, when the stretch to read is longer than it reads', async () => {
    const small = new AnswerScan({
      kafka: env.kafka,
      admin,
      serde: env.serde,
      trust: { keys: keyRing({ executor: parseTrustedKeys(executorKey.trustedKey) }) },
      publisher: publisher,
      logger,
      maxRecords: 1,
    });
    const old = answer(`scan-old-${Date.now()}`, { completed_at: Date.now() - 60 * 60_000 });
    expect(await small.published(old.run_id, old, toPartition(0))).toBe('unscanned');
  });
});
