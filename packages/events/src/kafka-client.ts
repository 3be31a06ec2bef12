import { Kafka, logLevel } from 'kafkajs';
import type { LogEntry, logCreator, SASLOptions } from 'kafkajs';
import type { Logger } from '@gatehouse/telemetry';
import type { EventsConfig, KafkaSasl } from './config.js';

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
 * A kafkajs client for the configured brokers, authenticating as the configured principal over TLS
 * when asked, whose own logs go through the component's pino logger.
 */
export function createKafka(config: EventsConfig, clientId: string, logger: Logger): Kafka {
  const kafkaLogger = logger.child({ lib: 'kafkajs' });
  return new Kafka({
    clientId,
    brokers: [...config.brokers],
    logLevel: logLevel.WARN,
    logCreator: bridge(kafkaLogger),
    retry: { initialRetryTime: 200, retries: 8 },
    ...(config.ssl === true ? { ssl: true } : {}),
    ...(config.sasl === undefined ? {} : { sasl: saslOptions(config.sasl) }),
  });
}
