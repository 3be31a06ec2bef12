import { Kafka, logLevel } from 'kafkajs';
import type { LogEntry, logCreator, SASLOptions } from 'kafkajs';
import type { Logger } from '@gatehouse/telemetry';
import type { BaseOptions, SASLMechanismValue } from '@platformatic/kafka';
import type { EventsConfig, KafkaSasl, SaslMechanism } from './config.js';

function bridge(logger: Logger): logCreator {
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, ...rest } = log;
      const fields = { kafkajs: rest };
      if (level === logLevel.ERROR) logger.error(fields, message);
      else if (level === logLevel.WARN) logger.warn(fields, message);
      else if (level === logLevel.INFO) logger.info(fields, message);
      else logger.debug(fields, message);
    };
}

/** kafkajs' SASL options, a union keyed by mechanism: every mechanism Gatehouse accepts takes a username and a password. */
function saslOptions(sasl: KafkaSasl): SASLOptions {
  return { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password };
}

/**
 * A connection to the configured brokers, authenticating as the configured principal over TLS when
 * asked. Gatehouse's publishers, consumers and admin are @platformatic/kafka clients built from
 * `wireOptions`; the kafkajs client it still is serves the operators' CLI and the trace reader,
 * its logs going through the component's pino logger.
 */
export class KafkaConnection extends Kafka {
  constructor(
    readonly config: EventsConfig,
    readonly clientId: string,
    logger: Logger,
  ) {
    super({
      clientId,
      brokers: [...config.brokers],
      logLevel: logLevel.WARN,
      logCreator: bridge(logger.child({ lib: 'kafkajs' })),
      retry: { initialRetryTime: 200, retries: 8 },
      ...(config.ssl === true ? { ssl: true } : {}),
      ...(config.sasl === undefined ? {} : { sasl: saslOptions(config.sasl) }),
    });
  }

  /** The same brokers, principal and TLS for a @platformatic/kafka client named `clientId`. */
  wireOptions(): BaseOptions {
    const { sasl } = this.config;
    return {
      clientId: this.clientId,
      bootstrapBrokers: [...this.config.brokers],
      // A broker that does not answer within this is treated as gone: the send fails and its caller retries.
      requestTimeout: 30_000,
      retries: 8,
      retryDelay: 200,
      ...(this.config.ssl === true ? { tls: {} } : {}),
      ...(sasl === undefined
        ? {}
        : { sasl: { mechanism: WIRE_MECHANISM[sasl.mechanism], username: sasl.username, password: sasl.password } }),
    };
  }
}

/** Gatehouse's mechanism names (kafkajs' spelling) as @platformatic/kafka spells them. */
const WIRE_MECHANISM: Readonly<Record<SaslMechanism, SASLMechanismValue>> = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
};

export function createKafka(config: EventsConfig, clientId: string, logger: Logger): KafkaConnection {
  return new KafkaConnection(config, clientId, logger);
}
