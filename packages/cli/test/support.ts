import type { CliIo } from '@gatehouse/cli';

export interface CapturedIo extends CliIo {
  readonly out: () => string;
  readonly err: () => string;
}

/** An io that records what a command writes; `now` is fixed unless a clock is given. */
export function captureIo(options: { env?: Record<string, string>; tty?: boolean; clock?: () => number } = {}): CapturedIo {
  let out = '';
  let err = '';
  return {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text), isTTY: options.tty ?? false },
    env: options.env ?? {},
    now: options.clock ?? (() => 1_700_000_000_000),
    out: () => out,
    err: () => err,
  };
}
