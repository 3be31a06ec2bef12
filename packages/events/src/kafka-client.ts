import type { BaseOptions, SASLMechanismValue } from '@platformatic/kafka';
import type { EventsConfig, SaslMechanism } from './config.js';

/**
 * The configured brokers, principal and TLS, under a client name. Gatehouse's publishers,
 * consumers, admin and readers are @platformatic/kafka clients built from `wireOptions`.
 */
export class KafkaConnection {
  constructor(
    readonly config: EventsConfig,
    readonly clientId: string,
  ) {}

  /** The brokers, principal and TLS for a @platformatic/kafka client named `clientId`. */
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

/** Gatehouse's mechanism names as @platformatic/kafka spells them. */
const WIRE_MECHANISM: Readonly<Record<SaslMechanism, SASLMechanismValue>> = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
};

export function createKafka(config: EventsConfig, clientId: string): KafkaConnection {
  return new KafkaConnection(config, clientId);
}
