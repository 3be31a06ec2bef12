/**
 * Resolves with the first value `check` yields other than undefined, polling an outside system (a
 * broker, Redis) every `intervalMs`; rejects after `timeoutMs` naming `what`. Polls an observable
 * state: it never stands in for waiting a fixed time.
 */
export async function pollUntil<T>(check: () => Promise<T | undefined>, timeoutMs: number, what: string, intervalMs = 100): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
