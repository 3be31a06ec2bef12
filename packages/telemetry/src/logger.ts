import { pino } from 'pino';
import type { Logger, LoggerOptions } from 'pino';

export type { Logger };

/**
 * Paths that may hold raw tool arguments or results. Components log `arguments_sha256` and ids
 * instead; the censor is the second line of defence should a whole event ever be logged.
 */
const RAW_VALUE_PATHS = ['arguments', 'result', '*.arguments', '*.result', 'event.arguments', 'event.result'];

export interface CreateLoggerOptions {
  /** Minimum level; defaults to LOG_LEVEL, else `info`. */
  readonly level?: string;
  /** Where JSON lines go; defaults to stdout. */
  readonly destination?: pino.DestinationStream;
}

/** Standard output, shared by every logger of the process (made on first use). */
let stdout: pino.DestinationStream | undefined;

/** LOG_LEVEL, where empty means unset (the rule of every Gatehouse variable), else `info`. */
function levelFromEnv(): string {
  const level = process.env['LOG_LEVEL'];
  return level === undefined || level === '' ? 'info' : level;
}

/** The root logger of a process, named by its component; make children per consumer or route. */
export function createLogger(component: string, options: CreateLoggerOptions = {}): Logger {
  const config: LoggerOptions = {
    name: component,
    level: options.level ?? levelFromEnv(),
    base: { component, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: RAW_VALUE_PATHS, censor: '[redacted]' },
  };
  // Asynchronous: a line waits for the write before it rather than blocking the event loop on
  // one write per line, so under load lines leave in batches (pino flushes what is queued when the
  // process exits). A process killed outright loses only the lines still queued.
  return pino(config, options.destination ?? (stdout ??= pino.destination({ dest: 1, sync: false })));
}
