/**
 * The service's error catalogue: code → HTTP status, whether an identical call can ever succeed,
 * and a one-line meaning. Callers branch on `code`, never on message text.
 */
export const ERROR_CATALOGUE = {
  INVALID_REQUEST: { httpStatus: 400, retryable: false, meaning: 'The request is malformed: header, parameter or body.' },
  NOT_FOUND: { httpStatus: 404, retryable: false, meaning: "No such order for this tenant (other tenants' orders are not revealed)." },
  VERSION_CONFLICT: { httpStatus: 409, retryable: false, meaning: 'The order changed since the expected version was read.' },
  IDEMPOTENCY_KEY_REUSED: { httpStatus: 409, retryable: false, meaning: 'The idempotency key was already used with another request.' },
  IN_PROGRESS: { httpStatus: 409, retryable: true, meaning: 'Another request holds this idempotency key and has not finished.' },
  CURRENCY_MISMATCH: { httpStatus: 422, retryable: false, meaning: 'The refund is in another currency than the order.' },
  REFUND_EXCEEDS_BALANCE: { httpStatus: 422, retryable: false, meaning: 'The refund is larger than what is left to refund on the order.' },
  UNAVAILABLE: { httpStatus: 503, retryable: true, meaning: 'The service cannot answer right now.' },
  INTERNAL: { httpStatus: 500, retryable: true, meaning: 'An unexpected failure; nothing was written.' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface ErrorBody {
  readonly error: {
    readonly code: ErrorCode;
    readonly message: string;
    readonly retryable: boolean;
    readonly [detail: string]: unknown;
  };
}

export function errorBody(code: ErrorCode, message: string, details: Readonly<Record<string, unknown>> = {}): ErrorBody {
  return { error: { ...details, code, message, retryable: ERROR_CATALOGUE[code].retryable } };
}

/** An error the HTTP layer turns into `{ error: { code, message, retryable, ...details } }`. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, details: Readonly<Record<string, unknown>> = {}) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    this.details = details;
  }

  get httpStatus(): number {
    return ERROR_CATALOGUE[this.code].httpStatus;
  }

  toBody(): ErrorBody {
    return errorBody(this.code, this.message, this.details);
  }
}
