/** A dependency check: resolves true when the dependency answers as it should. */
export type ReadinessCheck = () => Promise<boolean>;

export interface Readiness {
  readonly ready: boolean;
  /** Per dependency: `ok`, or why not (`no answer within 2000 ms`, the error's message, `not ready`). */
  readonly checks: Readonly<Record<string, string>>;
}

async function within(check: ReadinessCheck, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([
      check().then(
        (ok) => (ok ? 'ok' : 'not ready'),
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs every check at once, each bounded by `timeoutMs`; ready when all say ok. */
export async function checkReadiness(checks: Readonly<Record<string, ReadinessCheck>>, timeoutMs = 2_000): Promise<Readiness> {
  const names = Object.keys(checks);
  const answers = await Promise.all(names.map((name) => within(checks[name] ?? (() => Promise.resolve(false)), timeoutMs)));
  const results = Object.fromEntries(names.map((name, i) => [name, answers[i] ?? 'not ready']));
  return { ready: answers.every((answer) => answer === 'ok'), checks: results };
}
