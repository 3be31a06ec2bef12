import { connect } from 'node:net';
import { createKafka, eventsConfigFromEnv, topicNames } from '@gatehouse/events';
import type { Topics } from '@gatehouse/events';
import { createLogger } from '@gatehouse/telemetry';
import type { Kafka, RetryOptions } from 'kafkajs';
import { CliError, ExitCode, usageError } from './exit-code.js';
import type { CliStream, Env } from './io.js';

export interface KafkaAccess {
  readonly kafka: Kafka;
  /** Resolves once some broker accepts a TCP connection; else a CliError (exit 3), within seconds. */
  readonly probe: () => Promise<void>;
  readonly topics: Topics;
  readonly brokers: string;
  readonly topicPrefix: string;
}

/** A CLI says "unreachable" within seconds instead of retrying for a minute as services do. */
export const CLI_RETRY: RetryOptions = { retries: 2, initialRetryTime: 300, maxRetryTime: 2_000 };

/** Kafka from the same variables the services read (KAFKA_BROKERS, GATEHOUSE_TOPIC_PREFIX…). */
export function kafkaAccess(env: Env, stderr: CliStream): KafkaAccess {
  let config;
  try {
    config = eventsConfigFromEnv(env);
  } catch (error) {
    throw usageError(error instanceof Error ? error.message : String(error));
  }
  // kafkajs's own logs stay quiet unless LOG_LEVEL asks for them; they go to stderr, never stdout.
  const logger = createLogger('gatehouse-cli', {
    level: env['LOG_LEVEL'] ?? 'silent',
    destination: { write: (line: string) => void stderr.write(line) },
  });
  const brokers = config.brokers.join(',');
  return {
    kafka: createKafka(config, 'gatehouse-cli', logger),
    probe: () => probeBrokers(config.brokers, brokers),
    topics: topicNames(config.topicPrefix),
    brokers,
    topicPrefix: config.topicPrefix,
  };
}

/** kafkajs errors that mean the brokers are not there (by name: they are not exported as classes we can rely on). */
const UNREACHABLE_ERRORS: ReadonlySet<string> = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSBrokerNotFound',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSLockTimeout',
]);

function chainOf(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && chain.length < 8) {
    chain.push(current);
    const next = current as { cause?: unknown; originalError?: unknown };
    current = next.originalError ?? next.cause;
  }
  return chain;
}

/** Maps a failure of a Kafka step to a CliError: brokers unreachable → exit 3, anything else → exit 1. */
export function kafkaFailure(error: unknown, what: string, brokers: string): CliError {
  if (error instanceof CliError) return error;
  const chain = chainOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const unreachable = chain.some((link) => link instanceof Error && UNREACHABLE_ERRORS.has(link.name));
  if (unreachable) {
    return new CliError(ExitCode.unreachable, 'KAFKA_UNREACHABLE', `cannot reach Kafka at ${brokers} (${what}): ${message}`, {
      cause: error,
    });
  }
  return new CliError(ExitCode.refused, 'KAFKA_FAILED', `${what} failed: ${message}`, { cause: error });
}

const PROBE_TIMEOUT_MS = 3_000;

function reachable(broker: string): Promise<boolean> {
  const at = broker.lastIndexOf(':');
  return new Promise((resolve) => {
    const socket = connect({ host: broker.slice(0, at), port: Number(broker.slice(at + 1)), timeout: PROBE_TIMEOUT_MS });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/**
 * kafkajs retries a seed broker for most of a minute (the client's retry policy, which admin and
 * consumer options do not shorten); a person at a terminal gets "unreachable" within seconds instead.
 */
async function probeBrokers(list: readonly string[], brokers: string): Promise<void> {
  const answers = await Promise.all(list.map(reachable));
  if (!answers.includes(true)) {
    throw new CliError(
      ExitCode.unreachable,
      'KAFKA_UNREACHABLE',
      `cannot reach Kafka at ${brokers}: no broker accepted a connection (refused, or no answer within ${PROBE_TIMEOUT_MS} ms)`,
    );
  }
}
