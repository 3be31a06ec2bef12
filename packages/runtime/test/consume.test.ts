import { describe, expect, it } from 'vitest';
import { consumerTuning, DEFAULT_SESSION_TIMEOUT_MS } from '@gatehouse/runtime';

describe('consumerTuning: the consumer settings every service shares', () => {
  it('starts a new group at the beginning of its topic and notices a dead member within 10 s', () => {
    expect(DEFAULT_SESSION_TIMEOUT_MS).toBe(10_000);
    expect(consumerTuning({})).toEqual({ fromBeginning: true, sessionTimeoutMs: 10_000 });
  });

  it("takes a service's concurrency, per-key limit and session timeout when given", () => {
    expect(consumerTuning({ maxConcurrency: 32, maxPerKey: 4, sessionTimeoutMs: 6_000 })).toEqual({
      fromBeginning: true,
      sessionTimeoutMs: 6_000,
      maxConcurrency: 32,
      maxPerKey: 4,
    });
  });

  it("leaves the parallel consumer's own defaults to it when a setting is undefined", () => {
    const tuning = consumerTuning({ maxConcurrency: undefined, maxPerKey: undefined, sessionTimeoutMs: undefined });
    expect(Object.keys(tuning).sort()).toEqual(['fromBeginning', 'sessionTimeoutMs']);
  });
});
