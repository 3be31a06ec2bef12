import type * as Platformatic from '@platformatic/kafka';
import { installReadCommitted } from './read-committed.js';

/** The @platformatic/kafka module, Gatehouse's Kafka client. */
export type WireClient = typeof Platformatic;

let loading: Promise<WireClient> | undefined;

/**
 * @platformatic/kafka, loaded when a process first connects to Kafka. Loading it compiles some forty
 * option validators (≈ 0.45 s of CPU on this project's reference machine), which a process that
 * never touches Kafka, such as most CLI commands, should not pay. Its consumers read at
 * read_committed as Kafka defines it (`read-committed.ts`) from the moment it is loaded.
 */
export function wireClient(): Promise<WireClient> {
  loading ??= import('@platformatic/kafka').then((wire) => {
    installReadCommitted();
    return wire;
  });
  return loading;
}
