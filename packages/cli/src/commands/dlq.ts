import type { EventPublisher, OutboundRecord, TopicRole } from '@gatehouse/events';
import type { CommandGroup } from '../command.js';
import type { DeadLetter } from '../dead-letter.js';
import { CliError, ExitCode, usageError } from '../exit-code.js';
import { formatBytes, formatDuration, parsePositiveInt } from '../format.js';
import type { Env } from '../io.js';
import type { KafkaAccess } from '../kafka-access.js';
import type { Output } from '../output.js';

const DEFAULT_LIMIT = 50;
const REPLAY_BATCH = 100;
const DEFAULT_READ_TIMEOUT_MS = 60_000;

/** For help; a unit test pins it to the topics of @gatehouse/events. */
export const DLQ_TOPIC_CHOICES = 'commands, execute, results, approvals.requested, approvals.decided, operator';

/**
 * Kafka, Avro and the events package take a while to load: only the dlq commands load them, when
 * they run, so every other command (and help) starts fast.
 */
async function kafkaModules() {
  const [events, access, reader, letters] = await Promise.all([
    import('@gatehouse/events'),
    import('../kafka-access.js'),
    import('../dlq-reader.js'),
    import('../dead-letter.js'),
  ]);
  /** `commands`, `approvalsRequested`, or the topic's name without prefix: `approvals.requested`, `gatehouse.commands`. */
  const roleOf = (name: string): TopicRole => {
    const role = events.TOPIC_ROLES.find((r) => {
      const base = events.topicNames('')[r];
      return name === r || name === base || name === base.replace(/^gatehouse\./, '');
    });
    if (role === undefined) throw usageError(`--topic must be one of ${DLQ_TOPIC_CHOICES}, got "${name}"`);
    return role;
  };
  const { kafkaAccess, kafkaFailure } = access;
  const { readDeadLetters } = reader;
  const { deadLetterView, originalHeaders } = letters;
  return { ...events, kafkaAccess, kafkaFailure, readDeadLetters, deadLetterView, originalHeaders, roleOf };
}

function readTimeoutMs(env: Env): number {
  const raw = env['GATEHOUSE_DLQ_READ_TIMEOUT_MS'];
  return raw === undefined || raw === '' ? DEFAULT_READ_TIMEOUT_MS : parsePositiveInt(raw, 'GATEHOUSE_DLQ_READ_TIMEOUT_MS');
}

type KafkaModules = Awaited<ReturnType<typeof kafkaModules>>;

async function read(
  k: KafkaModules,
  access: KafkaAccess,
  out: Output,
  env: Env,
  dlqTopics: readonly string[],
  newest?: number,
): Promise<DeadLetter[]> {
  await access.probe();
  const progress = out.progress('reading dead letters');
  let result;
  try {
    result = await k.readDeadLetters(access.kafka, dlqTopics, {
      timeoutMs: readTimeoutMs(env),
      onProgress: (done, total) => progress.update(done, total),
      ...(newest === undefined ? {} : { newest }),
    });
  } catch (error) {
    throw k.kafkaFailure(error, 'reading the DLQ', access.brokers);
  } finally {
    progress.finish();
  }
  if (result.missing.length === dlqTopics.length) {
    const prefix = access.topicPrefix === '' ? 'no topic prefix' : `topic prefix "${access.topicPrefix}"`;
    throw new CliError(
      ExitCode.refused,
      'NO_DLQ_TOPIC',
      `no such topic: ${result.missing.join(', ')} (${prefix}; is GATEHOUSE_TOPIC_PREFIX right?)`,
    );
  }
  return result.records;
}

function table(out: Output, records: readonly DeadLetter[], now: number): string {
  return out.table(
    [
      { header: 'ORIGIN', cell: (r: DeadLetter) => r.originTopic ?? r.dlqTopic.replace(/\.dlq$/, '') },
      { header: 'PARTITION', cell: (r) => (r.originPartition === null ? '-' : String(r.originPartition)), right: true },
      { header: 'OFFSET', cell: (r) => r.originOffset ?? '-', right: true },
      { header: 'REASON', cell: (r) => r.reason ?? '-' },
      { header: 'MESSAGE', cell: (r) => r.message ?? '-', max: 60 },
      { header: 'SIZE', cell: (r) => formatBytes(r.value?.length ?? 0), right: true },
      { header: 'AGE', cell: (r) => formatDuration(Math.max(0, now - (r.deadAt ?? r.timestamp))), right: true },
    ],
    records,
  );
}

const byAge = (a: DeadLetter, b: DeadLetter): number => (a.deadAt ?? a.timestamp) - (b.deadAt ?? b.timestamp);

export const dlq: CommandGroup = {
  name: 'dlq',
  summary: 'read and replay dead letters: records a consumer could not decode, kept in <topic>.dlq (Kafka)',
  subcommands: [
    {
      name: 'list',
      summary: 'dead letters, oldest first: origin, offset, reason, message, size, age (values are never printed)',
      options: {
        topic: { type: 'string', value: 'topic', description: `one DLQ: ${DLQ_TOPIC_CHOICES} (default: all)` },
        limit: { type: 'string', value: 'n', description: `the newest n records (default ${DEFAULT_LIMIT})` },
      },
      notes: [
        'Reads from the beginning with a throwaway consumer group; commits nothing. Kafka settings: KAFKA_BROKERS, GATEHOUSE_TOPIC_PREFIX.',
      ],
      async run({ options, out, io }) {
        const topic = options.string('topic');
        const limit = parsePositiveInt(options.string('limit') ?? String(DEFAULT_LIMIT), '--limit');
        const k = await kafkaModules();
        const roles = topic === undefined ? k.TOPIC_ROLES : [k.roleOf(topic)];
        const access = k.kafkaAccess(io.env);
        const records = (
          await read(
            k,
            access,
            out,
            io.env,
            roles.map((role) => k.dlqTopicOf(access.topics[role])),
            limit,
          )
        )
          .sort(byAge)
          .slice(-limit);
        const now = io.now();
        out.result(
          records.map((r) => k.deadLetterView(r, now)),
          () => (records.length === 0 ? 'no dead letters\n' : table(out, records, now)),
        );
      },
    },
    {
      name: 'replay',
      summary: 'publish dead letters again to their origin topic (original key, value and headers), to be decoded anew',
      options: {
        topic: { type: 'string', value: 'topic', required: true, description: `whose DLQ: ${DLQ_TOPIC_CHOICES}` },
        reason: { type: 'string', value: 'REASON', description: 'only records dead-lettered for this reason (e.g. UNKNOWN_SCHEMA_ID)' },
        'dry-run': { type: 'boolean', description: 'list what would be replayed; publish nothing' },
      },
      notes: [
        'A record that is still bad goes back to the DLQ. Replayed records stay in the DLQ too: replaying twice publishes twice.',
        'Example: gatehouse dlq replay --topic commands --reason UNKNOWN_SCHEMA_ID --dry-run',
      ],
      async run({ options, out, io }) {
        const k = await kafkaModules();
        const role = k.roleOf(options.required('topic'));
        const reason = options.string('reason');
        const dryRun = options.flag('dry-run');
        const access = k.kafkaAccess(io.env);
        const origin = access.topics[role];
        const dlqTopic = k.dlqTopicOf(origin);
        const selected = (await read(k, access, out, io.env, [dlqTopic])).filter((r) => reason === undefined || r.reason === reason);
        const now = io.now();
        const summary = (replayed: number) => ({
          dlq_topic: dlqTopic,
          topic: origin,
          dry_run: dryRun,
          selected: selected.length,
          replayed,
          records: selected.map((r) => k.deadLetterView(r, now)),
        });
        if (dryRun || selected.length === 0) {
          out.result(summary(0), () =>
            selected.length === 0
              ? `nothing to replay from ${dlqTopic}${reason === undefined ? '' : ` with reason ${reason}`}\n`
              : `${table(out, selected, now)}dry run: would replay ${selected.length} record(s) from ${dlqTopic} to ${origin}; nothing was published\n`,
          );
          return;
        }
        // The origin is the DLQ's own topic by construction; records keep the order they had per partition.
        const progress = out.progress(`replaying to ${origin}`);
        let replayed = 0;
        let publisher: EventPublisher | undefined;
        try {
          // The serde is not used to encode (records go as they are), only to know the topics.
          publisher = await k.EventPublisher.connect(
            access.kafka,
            new k.EventSerde({ registryUrl: access.registryUrl, topics: access.topics }),
          );
          for (let i = 0; i < selected.length; i += REPLAY_BATCH) {
            const batch = selected.slice(i, i + REPLAY_BATCH);
            const messages: OutboundRecord[] = batch.map((r) => ({ key: r.key, value: r.value, headers: k.originalHeaders(r) }));
            await publisher.sendRaw(origin, messages);
            replayed += batch.length;
            progress.update(replayed, selected.length);
          }
        } catch (error) {
          throw k.kafkaFailure(error, `replaying (${replayed} of ${selected.length} published before the failure)`, access.brokers);
        } finally {
          progress.finish();
          await publisher?.disconnect().catch(() => undefined);
        }
        out.result(summary(replayed), () => `replayed ${replayed} record(s) from ${dlqTopic} to ${origin}\n`);
      },
    },
  ],
};
