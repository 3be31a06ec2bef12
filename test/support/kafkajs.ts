import { createKafka } from '@gatehouse/events';
import type { EventsConfig, KafkaConnection } from '@gatehouse/events';
import { Kafka, logLevel } from 'kafkajs';
import type { SASLOptions } from 'kafkajs';

/**
 * A Gatehouse connection that is also a kafkajs client on the same brokers, principal and TLS.
 * Tests write, read and inspect topics through kafkajs: a client independent of the one Gatehouse
 * runs on, so a test does not take Gatehouse's client's word for what is on the broker.
 */
export type TestKafka = KafkaConnection & Kafka;

export function testKafka(config: EventsConfig, clientId: string): TestKafka {
  const connection = createKafka(config, clientId);
  const { sasl } = config;
  const kafkajs = new Kafka({
    clientId,
    brokers: [...config.brokers],
    logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: 200, retries: 8 },
    ...(config.ssl === true ? { ssl: true } : {}),
    ...(sasl === undefined ? {} : { sasl: { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } as SASLOptions }),
  });
  // A kafkajs consumer's disconnect waits for its fetch in flight, which the broker holds open up to
  // maxWaitTimeInMs (5 s by default) when there is nothing to read: every idle reader a test stopped
  // cost it 5 s. Reading tests ask again every 200 ms instead.
  const consumer = kafkajs.consumer.bind(kafkajs);
  kafkajs.consumer = (options) => consumer({ maxWaitTimeInMs: 200, ...options });
  return Object.assign(kafkajs, { config, clientId, wireOptions: () => connection.wireOptions() });
}
