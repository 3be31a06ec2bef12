import { ErrorCode } from './error-codes.js';
import { GatehouseError } from './gatehouse-error.js';

/**
 * The `error` of a failed result envelope. `code` drives control flow; `message` is for people.
 * One shape end to end: a handler fails with it, `errorResult` (events) puts it on the wire — where an
 * absent field is `null`, an absent `permitted` is `[]` and `details` is JSON text — and the client
 * returns it again as this same structure (an empty `permitted` comes back absent).
 */
export interface ToolError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly retryable: boolean;
  /** JSON pointer of the offending argument (`/destination/country`), when there is one. */
  readonly field?: string;
  /** What the run may call instead (capability denials). */
  readonly permitted?: readonly string[];
  /** The tool or path that would serve (`preview_address_change.v2`, the live version…). */
  readonly next?: string;
  readonly retryAfterMs?: number;
  readonly details?: unknown;
}

export type ToolErrorExtras = {
  readonly [K in Exclude<keyof ToolError, 'code' | 'message'>]?: ToolError[K] | undefined;
};

/** Builds a ToolError; `retryable` comes from the catalogue unless `extras.retryable` overrides it. */
export function toolError(code: ErrorCode, message: string, extras: ToolErrorExtras = {}): ToolError {
  const error: { -readonly [K in keyof ToolError]: ToolError[K] } = {
    code,
    message,
    retryable: extras.retryable ?? ErrorCode[code].retryable,
  };
  if (extras.field !== undefined) error.field = extras.field;
  if (extras.permitted !== undefined) error.permitted = extras.permitted;
  if (extras.next !== undefined) error.next = extras.next;
  if (extras.retryAfterMs !== undefined) error.retryAfterMs = extras.retryAfterMs;
  if (extras.details !== undefined) error.details = extras.details;
  return error;
}

/** A tool catalog that cannot be loaded. `problems` lists every problem found, not only the first. */
export class ContractError extends GatehouseError<'CATALOG_INVALID'> {
  readonly problems: readonly string[];

  constructor(problems: readonly string[], options?: ErrorOptions) {
    super(
      'CATALOG_INVALID',
      `Tool catalog is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems.map((p) => `- ${p}`).join('\n'),
      { cause: options?.cause },
    );
    this.problems = Object.freeze([...problems]);
  }
}
