import { createKafka } from '@gatehouse/events';
import type { EventsConfig, KafkaConnection } from '@gatehouse/events';
import { Kafka, logLevel } from 'kafkajs';
import type { SASLOptions } from 'kafkajs';

/**
 * A Gatehouse connection that is also a kafkajs client on the same brokers: the client of the
 * raw relay (a), of the load drivers and of the bench's own topic chores. Silent: kafkajs logs the
 * retriable errors of topic creation and metadata refreshes as errors, and a real failure surfaces
 * as an exception.
 */
export type BenchKafka = KafkaConnection & Kafka;

export function kafkajsClient(config: EventsConfig, clientId: string): BenchKafka {
  const { sasl } = config;
  const kafkajs = new Kafka({
    clientId,
    brokers: [...config.brokers],
    logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: 200, retries: 8 },
    ...(config.ssl === true ? { ssl: true } : {}),
    ...(sasl === undefined ? {} : { sasl: { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } as SASLOptions }),
  });
  const connection = createKafka(config, clientId);
  return Object.assign(kafkajs, { config, clientId, wireOptions: () => connection.wireOptions() });
}
