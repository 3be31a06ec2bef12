export const ToolPackLoadErrorCode = { PACK_LOAD_FAILED: 'PACK_LOAD_FAILED' } as const;
export type ToolPackLoadErrorCode = keyof typeof ToolPackLoadErrorCode;

/** A tool pack that cannot be loaded or hosted: the service does not start. */
export class ToolPackLoadError extends Error {
  readonly code: ToolPackLoadErrorCode = 'PACK_LOAD_FAILED';
  readonly retryable = false as const;

  constructor(message: string, options?: ErrorOptions) {
    super(`tool pack: ${message}`, options);
    this.name = 'ToolPackLoadError';
  }
}
