/** Failures of recording or reading a trace. */
export const TraceErrorCode = {
  RECORD_TIMEOUT: { retryable: true, meaning: 'The topics were not read up to their ends within maxMs.' },
  READ_FAILED: { retryable: true, meaning: 'A record of the run could not be read or decoded (e.g. the registry is unreachable).' },
  RUN_NOT_FOUND: { retryable: false, meaning: 'No command of the run is on the commands topic.' },
  TRACE_INVALID: { retryable: false, meaning: 'A document is not a gatehouse-trace/1 trace.' },
} as const;
export type TraceErrorCode = keyof typeof TraceErrorCode;

export class TraceError extends Error {
  readonly code: TraceErrorCode;
  readonly retryable: boolean;

  constructor(code: TraceErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TraceError';
    this.code = code;
    this.retryable = TraceErrorCode[code].retryable;
  }
}
