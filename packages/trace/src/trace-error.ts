import { GatehouseError } from '@gatehouse/contracts';

/** The codes of failures of recording or reading a trace (see the one catalogue, `ERRORS`). */
export type TraceErrorCode = 'RECORD_TIMEOUT' | 'READ_FAILED' | 'RUN_NOT_FOUND' | 'TRACE_INVALID';

/** Failures of recording or reading a trace. */
export class TraceError extends GatehouseError<TraceErrorCode> {
  constructor(code: TraceErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
  }
}
