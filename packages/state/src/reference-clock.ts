import type { Redis } from './redis-client.js';
import type { RedisErrorLog } from './redis-client.js';

/** How often the offset to Redis' clock is read again (a machine's clock that jumps is caught within it). */
const REFRESH_MS = 15_000;
/** A TIME answer slower than this says too little about when Redis read its clock: it is not used. */
const MAX_ROUND_TRIP_MS = 500;

/**
 * The time an instance decides by: Redis' clock (TIME), kept as an offset from this machine's and
 * read again every 15 s. Leases are judged inside Redis scripts by that same clock; deadlines,
 * approval, proposal and run expiry and call assertions' lifetimes judged with `now()` agree with
 * them and with every other instance, whatever this machine's clock says. Until Redis first answers
 * the offset is 0 (this machine's clock).
 */
export class ReferenceClock {
  #offsetMs = 0;
  #timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly redis: Redis,
    private readonly log: RedisErrorLog | undefined,
  ) {}

  /** Reads Redis' clock once (waiting for it at most as long as a first answer takes), then every 15 s. */
  static async start(redis: Redis, log?: RedisErrorLog): Promise<ReferenceClock> {
    const clock = new ReferenceClock(redis, log);
    await clock.sample();
    clock.#timer = setInterval(() => void clock.sample(), REFRESH_MS);
    clock.#timer.unref();
    return clock;
  }

  /** The reference time now (epoch ms). */
  now(): number {
    return Date.now() + this.#offsetMs;
  }

  /** How far Redis' clock is ahead of this machine's (ms; negative when behind). */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** A reference time (epoch ms) as this machine's clock reads it, for waits timed by this machine. */
  local(at: number): number {
    return at - this.#offsetMs;
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  private async sample(): Promise<void> {
    try {
      const before = Date.now();
      const [seconds, micros] = await this.redis.time();
      const after = Date.now();
      if (after - before > MAX_ROUND_TRIP_MS) return;
      this.#offsetMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - Math.round((before + after) / 2);
    } catch (error) {
      this.log?.warn(
        { err: { message: error instanceof Error ? error.message : String(error) } },
        "Redis' clock could not be read; the last offset stays",
      );
    }
  }
}
