import { GatehouseError } from '@gatehouse/contracts';

/** The codes of failures of the event plumbing itself, as opposed to tool-call results (see the one catalogue, `ERRORS`). */
export type EventsErrorCode =
  'CONFIG_INVALID' | 'REGISTRY_UNAVAILABLE' | 'SCHEMA_REFUSED' | 'ENCODE_FAILED' | 'TOPICS_MISSING' | 'CLAIM_LOST' | 'CONTRACT_CHANGED';

/** A failure of the event plumbing: a malformed address, the registry, a schema, a missing topic. */
export class EventsError extends GatehouseError<EventsErrorCode> {
  constructor(code: EventsErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
  }
}
