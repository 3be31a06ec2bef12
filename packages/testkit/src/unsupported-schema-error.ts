/** Failures of the generator itself: a schema it cannot turn into cases. */
export const TestkitErrorCode = {
  UNSUPPORTED_SCHEMA: {
    retryable: false,
    meaning: 'A schema uses a keyword, pattern or format the generator cannot satisfy; add `examples: [...]` there.',
  },
} as const;
export type TestkitErrorCode = keyof typeof TestkitErrorCode;

/** Appended to reasons that an author-given example resolves. */
export const EXAMPLES_HINT = 'add `examples: [<valid value>]` at this location';

/**
 * Thrown when a schema location cannot be turned into a value. `schemaPointer` names the location
 * (`#/properties/destination/oneOf/1/properties/country`), so a tool author can add `examples`.
 */
export class UnsupportedSchemaError extends Error {
  readonly code: TestkitErrorCode = 'UNSUPPORTED_SCHEMA';
  readonly retryable = false;
  readonly schemaPointer: string;

  constructor(schemaPointer: string, reason: string, options: { cause?: unknown } = {}) {
    super(`Unsupported schema at ${schemaPointer}: ${reason}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UnsupportedSchemaError';
    this.schemaPointer = schemaPointer;
  }
}
