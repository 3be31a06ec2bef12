import { connect } from 'node:net';
import { createKafka, eventsConfigFromEnv, kafkaClientCodes, topicNames } from '@gatehouse/events';
import type { KafkaConnection, Topics } from '@gatehouse/events';
import { CliError, ExitCode, usageError } from './exit-code.js';
import type { Env } from './io.js';

export interface KafkaAccess {
  readonly kafka: KafkaConnection;
  /** Resolves once some broker accepts a TCP connection; else a CliError (exit 3), within seconds. */
  readonly probe: () => Promise<void>;
  readonly topics: Topics;
  readonly brokers: string;
  readonly topicPrefix: string;
  readonly registryUrl: string;
}

/** Kafka from the same variables the services read (KAFKA_BROKERS, GATEHOUSE_TOPIC_PREFIX…). */
export function kafkaAccess(env: Env): KafkaAccess {
  let config;
  try {
    config = eventsConfigFromEnv(env);
  } catch (error) {
    throw usageError(error instanceof Error ? error.message : String(error));
  }
  const brokers = config.brokers.join(',');
  return {
    kafka: createKafka(config, 'gatehouse-cli'),
    probe: () => probeBrokers(config.brokers, brokers),
    topics: topicNames(config.topicPrefix),
    brokers,
    topicPrefix: config.topicPrefix,
    registryUrl: config.registryUrl,
  };
}

/** The client's errors that mean the brokers are not there: a connection that failed or a request never answered. */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set(['PLT_KFK_NETWORK', 'PLT_KFK_TIMEOUT']);

/** Maps a failure of a Kafka step to a CliError: brokers unreachable → exit 3, anything else → exit 1. */
export function kafkaFailure(error: unknown, what: string, brokers: string): CliError {
  if (error instanceof CliError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const unreachable = kafkaClientCodes(error).some((code) => UNREACHABLE_CODES.has(code));
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
 * A client retries a seed broker for a while, each request bounded by a long timeout; a person at a
 * terminal gets "unreachable" within seconds instead.
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
