import { cpuMark, cpuSince } from './driver.js';
import type { LoadReport, LoadSpec } from './driver.js';
import { summarize } from './stats.js';

/** Resolves when `work` settles or after `ms`, whichever is first. */
function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))));
  return Promise.race([work.then(() => undefined), bound]).finally(() => clearTimeout(timer));
}

/**
 * A closed loop of `inFlight` calls for the spec's window, for the drivers that wait on each call
 * themselves (MCP, HTTP): each answer releases the next call on the same lane until the window
 * ends. `call` answers undefined for ok, else the error's code. Calls still in flight when the
 * drain ends count as never answered, and are still waited for (bounded by `settleMs`), so the next
 * load starts on an idle system.
 */
export async function closedLoop(
  spec: LoadSpec,
  inFlight: number,
  call: (lane: number) => Promise<string | undefined>,
): Promise<LoadReport> {
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  let ok = 0;
  let lastOkAt = 0;
  let sent = 0;
  let lastSentAt = 0;
  let outstanding = 0;
  let counting = true;
  const cpuAtStart = cpuMark();
  const started = Date.now();
  const end = started + spec.durationMs;
  const lane = async (index: number): Promise<void> => {
    do {
      const sentAt = Date.now();
      sent += 1;
      lastSentAt = sentAt;
      outstanding += 1;
      const code = await call(index);
      outstanding -= 1;
      const arrived = Date.now();
      if (!counting) continue;
      latencies.push(arrived - sentAt);
      if (code === undefined) {
        ok += 1;
        lastOkAt = arrived;
      } else {
        errors[code] = (errors[code] ?? 0) + 1;
      }
    } while (Date.now() < end);
  };
  const everything = Promise.all(Array.from({ length: inFlight }, (_, i) => lane(i)));
  await within(everything, end + spec.drainMs - Date.now());
  const cpu = cpuSince(cpuAtStart, latencies.length);
  const unanswered = outstanding;
  for (let i = 0; i < unanswered; i += 1) latencies.push(Number.POSITIVE_INFINITY);
  counting = false;
  await within(everything, spec.settleMs);
  return {
    sent,
    saturated: false,
    ok,
    errors,
    unanswered,
    windowMs: Math.max(0, lastSentAt - started),
    throughput: ok === 0 ? 0 : (ok * 1000) / Math.max(1, lastOkAt - started),
    latencyMs: summarize(latencies),
    stageMediansMs: null,
    cpu,
  };
}
