/** Where a command writes and what it reads from its surroundings; a process or a test. */
export interface CliStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export type Env = Readonly<Record<string, string | undefined>>;

export interface CliIo {
  readonly stdout: CliStream;
  readonly stderr: CliStream;
  readonly env: Env;
  readonly now: () => number;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, now: Date.now };
}
