import type { Redis } from './redis-client.js';
import type { RedisErrorLog } from './redis-client.js';

/** How often the offset to Redis' clock is read again (a machine's clock that jumps is caught within it). */
const REFRESH_MS = 15_000;
/** A TIME answer within this round trip is taken as it comes (its offset is right within half of it). */
const GOOD_ROUND_TRIP_MS = 500;

/** What one TIME answer says: Redis' clock minus this machine's, and how far off that can be (half the round trip). */
export interface ClockReading {
  readonly offsetMs: number;
  readonly uncertaintyMs: number;
}

/**
 * Whether a new reading replaces the one in use. A slow answer (a busy event loop, a loaded Redis)
 * still bounds the offset within half its round trip: far better than none when this machine's
 * clock is 30 s off, so the first reading is always taken. After that a reading is taken when its
 * round trip is good, when it is at least as certain as the one in use, or when the two disagree
 * by more than both uncertainties together (this machine's clock jumped).
 */
export function takesOver(current: ClockReading | undefined, next: ClockReading): boolean {
  if (current === undefined) return true;
  if (next.uncertaintyMs <= GOOD_ROUND_TRIP_MS / 2 || next.uncertaintyMs <= current.uncertaintyMs) return true;
  return Math.abs(next.offsetMs - current.offsetMs) > next.uncertaintyMs + current.uncertaintyMs;
}

/**
 * The time an instance decides by: Redis' clock (TIME), kept as an offset from this machine's and
 * read again every 15 s. Leases are judged inside Redis scripts by that same clock; deadlines,
 * approval, proposal and run expiry and call assertions' lifetimes judged with `now()` agree with
 * them and with every other instance, whatever this machine's clock says. Until Redis first answers
 * the offset is 0 (this machine's clock).
 */
export class ReferenceClock {
  #reading: ClockReading | undefined;
  #timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly redis: Redis,
    private readonly log: RedisErrorLog | undefined,
  ) {}

  /** Reads Redis' clock twice (waiting for it at most as long as a first answer takes), then every 15 s. */
  static async start(redis: Redis, log?: RedisErrorLog): Promise<ReferenceClock> {
    const clock = new ReferenceClock(redis, log);
    // The first answer's round trip holds the connection's set-up (on a cluster, its slot map too):
    // a second one, on the open connection, is the reading to keep.
    await clock.sample();
    await clock.sample();
    clock.#timer = setInterval(() => void clock.sample(), REFRESH_MS);
    clock.#timer.unref();
    return clock;
  }

  /** The reference time now (epoch ms). */
  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** How far Redis' clock is ahead of this machine's (ms; negative when behind). */
  get offsetMs(): number {
    return this.#reading?.offsetMs ?? 0;
  }

  /** A reference time (epoch ms) as this machine's clock reads it, for waits timed by this machine. */
  local(at: number): number {
    return at - this.offsetMs;
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  private async sample(): Promise<void> {
    try {
      const before = Date.now();
      const [seconds, micros] = await this.redis.time();
      const after = Date.now();
      const reading = {
        offsetMs: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - Math.round((before + after) / 2),
        uncertaintyMs: (after - before) / 2,
      };
      if (takesOver(this.#reading, reading)) this.#reading = reading;
    } catch (error) {
      this.log?.warn(
        { err: { message: error instanceof Error ? error.message : String(error) } },
        "Redis' clock could not be read; the last offset stays",
      );
    }
  }
}
