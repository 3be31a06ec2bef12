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

  /**
   * The brokers, principal and TLS for a @platformatic/kafka client named `clientId`, retrying a
   * failed request as `retrying` says.
   */
  wireOptions(retrying: WireRetrying = 'briefly'): BaseOptions {
    const { sasl } = this.config;
    return {
      clientId: this.clientId,
      bootstrapBrokers: [...this.config.brokers],
      // A broker that does not answer within this is treated as gone: the send fails and its caller retries.
      requestTimeout: 30_000,
      ...RETRYING[retrying],
      ...(this.config.ssl === true ? { tls: {} } : {}),
      ...(sasl === undefined
        ? {}
        : { sasl: { mechanism: WIRE_MECHANISM[sasl.mechanism], username: sasl.username, password: sasl.password } }),
    };
  }
}

/**
 * How a client retries a request that failed: `briefly`, and its caller decides what next (a
 * publisher's callers send again, a person is told), or `through-elections`, for a group member.
 */
export type WireRetrying = 'briefly' | 'through-elections';

// A broker killed outright is declared dead only after the controller's broker session timeout (9 s
// by default); its partitions and the groups it coordinated are then led elsewhere (10–13 s on the
// stack's three-broker cluster). A group member keeps retrying a fetch, a commit or a join for about
// half a minute, refreshing metadata between tries as Kafka's own clients do, so it keeps its place
// in its group and reads its other partitions meanwhile. Giving up instead closed the member, and
// joining again waited on the coordinator's own move: every partition of the group stood still
// for up to 20 s. Publishers retry briefly: a produce retried this long was seen to keep waiting
// on the dead leader for the whole half minute, where failing fast and sending again reached the
// new leader in about 10 s.
const RETRYING: Readonly<Record<WireRetrying, Pick<BaseOptions, 'retries' | 'retryDelay'>>> = {
  briefly: { retries: 8, retryDelay: 200 },
  'through-elections': { retries: 30, retryDelay: (_client, _operation, attempt) => Math.min(1_000, 100 * 2 ** (attempt - 1)) },
};

/** Gatehouse's mechanism names as @platformatic/kafka spells them. */
const WIRE_MECHANISM: Readonly<Record<SaslMechanism, SASLMechanismValue>> = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
};

export function createKafka(config: EventsConfig, clientId: string): KafkaConnection {
  return new KafkaConnection(config, clientId);
}
