import type { ReadinessCheck } from '@gatehouse/telemetry';

/** The admin call the Kafka check makes; a connected `KafkaAdmin` of @gatehouse/events is one. */
export interface ClusterAdmin {
  brokerCount(): Promise<number>;
}

/** A Redis connection, as far as readiness asks it. */
export interface Pingable {
  ping(): Promise<string>;
}

/** A PostgreSQL pool or client, as far as readiness asks it. */
export interface Queryable {
  query(sql: string): Promise<unknown>;
}

/** What readiness asks of a consuming service: its group membership. */
export interface GroupMember {
  readonly hasJoined: () => boolean;
}

/**
 * Kafka answers, and this member has joined its consumer group: a member that has not is not yet
 * doing the work it is there for.
 */
export function kafkaReady(admin: ClusterAdmin, member: GroupMember): ReadinessCheck {
  return async () => {
    if (!member.hasJoined()) throw new Error('not yet a member of its consumer group');
    return (await admin.brokerCount()) > 0;
  };
}

/** The schema registry lists its subjects (bounded by `timeoutMs`). */
export function registryReady(registryUrl: string, timeoutMs = 2_000): ReadinessCheck {
  return async () => {
    const response = await fetch(`${registryUrl}/subjects`, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return response.ok;
  };
}

export function redisReady(redis: Pingable): ReadinessCheck {
  return async () => (await redis.ping()) === 'PONG';
}

export function postgresReady(pool: Queryable): ReadinessCheck {
  return async () => {
    await pool.query('SELECT 1');
    return true;
  };
}

/** What every consuming service needs to be ready: Kafka and its group, the registry and Redis. */
export function consumerChecks(
  runtime: { readonly admin: ClusterAdmin; readonly events: { readonly registryUrl: string } },
  member: GroupMember,
  redis: Pingable,
): Record<string, ReadinessCheck> {
  return { kafka: kafkaReady(runtime.admin, member), registry: registryReady(runtime.events.registryUrl), redis: redisReady(redis) };
}
