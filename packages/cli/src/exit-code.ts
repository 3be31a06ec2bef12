import { GatehouseError } from '@gatehouse/contracts';

/** What the process's exit status means, for scripts that branch on it. */
export const ExitCode = {
  /** Done. */
  ok: 0,
  /** The service refused or the operation failed: 401, 403, 404, 409, 422, a failed replay. */
  refused: 1,
  /** The command line is wrong: unknown command or option, a missing or malformed value, missing settings. */
  usage: 2,
  /** The service or the stack could not be reached (connection refused, timeout, 502/503/504, brokers down). */
  unreachable: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * A failure the CLI reports and exits with: a stable `code`, a message for people, the exit status.
 * `code` is one of the catalogue's, or, passed on from a service's answer, whatever that service said.
 */
export class CliError extends GatehouseError<string> {
  readonly exitCode: ExitCode;
  /** Extra fields of the answer (HTTP status, `permitted`, `state`…), shown with --json. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(exitCode: ExitCode, code: string, message: string, options: { details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
    this.exitCode = exitCode;
    this.details = options.details ?? {};
  }
}

export function usageError(message: string): CliError {
  return new CliError(ExitCode.usage, 'USAGE', message);
}
