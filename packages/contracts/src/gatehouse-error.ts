import { ERRORS, isGatehouseErrorCode } from './error-codes.js';
import type { GatehouseErrorCode } from './error-codes.js';

export interface GatehouseErrorOptions {
  /** Overrides the catalogue's default for this one error. */
  readonly retryable?: boolean | undefined;
  readonly cause?: unknown;
}

/**
 * What every error Gatehouse throws is: a `code` of the one catalogue (`ERRORS`) and whether the
 * same call can ever succeed (`retryable`, the catalogue's default unless the thrower knows
 * better). Callers branch on `code`, never on the class or the message. `Code` is wider than the
 * catalogue only where a code is passed on from elsewhere (the CLI reports a service's answer).
 */
export class GatehouseError<Code extends string = GatehouseErrorCode> extends Error {
  readonly code: Code;
  readonly retryable: boolean;

  constructor(code: Code, message: string, options: GatehouseErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? (isGatehouseErrorCode(code) ? ERRORS[code].retryable : false);
  }
}

/**
 * Whether `value` is a GatehouseError, judged by its shape rather than by `instanceof`: a tool pack
 * loaded from its own path may bring its own copy of this package, whose class is another object.
 */
export function isGatehouseError(value: unknown): value is GatehouseError {
  if (!(value instanceof Error)) return false;
  const { code, retryable } = value as { code?: unknown; retryable?: unknown };
  return isGatehouseErrorCode(code) && typeof retryable === 'boolean';
}
