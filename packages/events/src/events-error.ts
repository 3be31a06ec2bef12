/** Failures of the event plumbing itself, as opposed to tool-call results. */
export const EventsErrorCode = {
  CONFIG_INVALID: { retryable: false, meaning: 'An address or topic setting from the environment is malformed.' },
  REGISTRY_UNAVAILABLE: { retryable: true, meaning: 'The schema registry could not be reached or answered with a server error.' },
  SCHEMA_REFUSED: { retryable: false, meaning: 'The registry refused a schema, e.g. as incompatible with the subject.' },
  ENCODE_FAILED: { retryable: false, meaning: 'An event does not match its Avro schema.' },
  TOPICS_MISSING: {
    retryable: true,
    meaning:
      'A topic the service produces to or consumes from was still missing (or not served) when its wait ran out; the message names each.',
  },
} as const;
export type EventsErrorCode = keyof typeof EventsErrorCode;

export class EventsError extends Error {
  readonly code: EventsErrorCode;
  readonly retryable: boolean;

  constructor(code: EventsErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EventsError';
    this.code = code;
    this.retryable = EventsErrorCode[code].retryable;
  }
}
