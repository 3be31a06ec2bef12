import { describe, expect, it } from 'vitest';
import { untilSucceeds } from '../src/retry.js';

const failing = (times: number) => {
  let calls = 0;
  return {
    attempt: () => {
      calls += 1;
      return calls <= times ? Promise.reject(new Error(`failure ${calls}`)) : Promise.resolve();
    },
    calls: () => calls,
  };
};

describe('untilSucceeds', () => {
  it('tries again after each failure until the attempt succeeds, reporting each failure', async () => {
    const work = failing(3);
    const heard: string[] = [];
    const done = await untilSucceeds(work.attempt, {
      firstDelayMs: 1,
      stopped: () => false,
      failed: (error) => heard.push((error as Error).message),
    });
    expect(done).toBe(true);
    expect(work.calls()).toBe(4);
    expect(heard).toEqual(['failure 1', 'failure 2', 'failure 3']);
  });

  it('gives up without reporting a failure that comes once stopped', async () => {
    const work = failing(Number.POSITIVE_INFINITY);
    let stopped = false;
    const heard: unknown[] = [];
    const done = await untilSucceeds(
      () => {
        stopped = work.calls() >= 1;
        return work.attempt();
      },
      { firstDelayMs: 1, stopped: () => stopped, failed: (error) => heard.push(error) },
    );
    expect(done).toBe(false);
    expect(work.calls()).toBe(2);
    expect(heard).toHaveLength(1);
  });

  it('makes no further try once stopped during a wait', async () => {
    const work = failing(Number.POSITIVE_INFINITY);
    let stopped = false;
    const done = await untilSucceeds(work.attempt, {
      firstDelayMs: 20,
      stopped: () => stopped,
      failed: () => {
        stopped = true;
      },
    });
    expect(done).toBe(false);
    expect(work.calls()).toBe(1);
  });
});
