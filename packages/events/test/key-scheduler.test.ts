import { describe, expect, it } from 'vitest';
import { KeyScheduler } from '@gatehouse/events';

function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('KeyScheduler', () => {
  it('lets other keys run while one key is at its bound', async () => {
    const s = new KeyScheduler(4, 1);
    const slow = gate();
    const order: string[] = [];
    s.submit('slow', async () => {
      order.push('slow-1 start');
      await slow.promise;
      order.push('slow-1 end');
    });
    s.submit('slow', () => {
      order.push('slow-2 start');
      return Promise.resolve();
    });
    s.submit('fast', () => {
      order.push('fast-1');
      return Promise.resolve();
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(order).toEqual(['slow-1 start', 'fast-1']);
    slow.open();
    await s.idle();
    expect(order).toEqual(['slow-1 start', 'fast-1', 'slow-1 end', 'slow-2 start']);
  });

  it('never runs more than the global bound at once', async () => {
    const s = new KeyScheduler(2, 10);
    let running = 0;
    let peak = 0;
    for (let i = 0; i < 12; i += 1) {
      s.submit(i % 2 === 0 ? 'a' : 'b', async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setImmediate(resolve));
        running -= 1;
      });
    }
    await s.idle();
    expect(peak).toBe(2);
    expect(s.size).toBe(0);
  });

  it('takes waiting keys round-robin, so a key with a backlog does not starve the others', async () => {
    const s = new KeyScheduler(1, 10);
    const started: string[] = [];
    const task = (name: string) => () => {
      started.push(name);
      return new Promise<void>((resolve) => setImmediate(resolve));
    };
    for (let i = 0; i < 3; i += 1) s.submit('a', task(`a${i}`));
    for (let i = 0; i < 3; i += 1) s.submit('b', task(`b${i}`));
    await s.idle();
    expect(started).toEqual(['a0', 'a1', 'b0', 'a2', 'b1', 'b2']);
  });

  it('keeps going after a task rejects', async () => {
    const s = new KeyScheduler(1, 1);
    const ran: number[] = [];
    s.submit('k', () => Promise.reject(new Error('boom')));
    s.submit('k', () => {
      ran.push(2);
      return Promise.resolve();
    });
    await s.idle();
    expect(ran).toEqual([2]);
  });
});
