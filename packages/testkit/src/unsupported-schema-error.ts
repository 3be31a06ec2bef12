import { GatehouseError } from '@gatehouse/contracts';

/** Appended to reasons that an author-given example resolves. */
export const EXAMPLES_HINT = 'add `examples: [<valid value>]` at this location';

/**
 * Thrown when a schema location cannot be turned into a value. `schemaPointer` names the location
 * (`#/properties/destination/oneOf/1/properties/country`), so a tool author can add `examples`.
 */
export class UnsupportedSchemaError extends GatehouseError<'UNSUPPORTED_SCHEMA'> {
  readonly schemaPointer: string;

  constructor(schemaPointer: string, reason: string, options: { cause?: unknown } = {}) {
    super('UNSUPPORTED_SCHEMA', `Unsupported schema at ${schemaPointer}: ${reason}`, { cause: options.cause });
    this.schemaPointer = schemaPointer;
  }
}
