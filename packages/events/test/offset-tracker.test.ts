import { describe, expect, it } from 'vitest';
import { OffsetTracker } from '@gatehouse/events';

describe('OffsetTracker', () => {
  it('commits only up to the lowest unfinished record', () => {
    const t = new OffsetTracker();
    for (const o of [10, 11, 12, 13]) expect(t.begin(o)).toBe(true);
    t.finish(11);
    t.finish(13);
    expect(t.committable()).toBe(10);
    t.finish(10);
    expect(t.committable()).toBe(12);
    t.finish(12);
    expect(t.committable()).toBe(14);
    expect(t.unfinished).toBe(0);
  });

  it('says nothing new until the committable offset moves', () => {
    const t = new OffsetTracker();
    expect(t.committable()).toBeUndefined();
    t.begin(0);
    expect(t.committable()).toBe(0);
    t.markCommitted(0);
    expect(t.committable()).toBeUndefined();
    t.finish(0);
    expect(t.committable()).toBe(1);
  });

  it('recognises a redelivered offset after a rejoin and refuses to begin it twice', () => {
    const t = new OffsetTracker();
    t.begin(5);
    t.begin(6);
    t.finish(6);
    expect(t.begin(5)).toBe(false);
    expect(t.begin(6)).toBe(false);
    expect(t.begin(7)).toBe(true);
    expect(t.unfinished).toBe(2);
  });

  it('keeps its memory bounded over a long run', () => {
    const t = new OffsetTracker();
    for (let o = 0; o < 10_000; o += 1) {
      t.begin(o);
      t.finish(o);
      if (o % 100 === 0) t.committable();
    }
    expect(t.committable()).toBe(10_000);
    expect(t.unfinished).toBe(0);
  });
});
