import { describe, expect, it } from 'vitest';
import { Teardown, withTeardown } from '@gatehouse/runtime';

describe('Teardown', () => {
  it('closes what started newest first, handing every step the drain bound', async () => {
    const teardown = new Teardown();
    const closed: string[] = [];
    teardown.add(() => void closed.push('redis'));
    teardown.add(() => void closed.push('publisher'));
    teardown.add(({ drainTimeoutMs }) => void closed.push(`consumer ${drainTimeoutMs}`));
    teardown.add(() => void closed.push('api'));
    await teardown.close({ drainTimeoutMs: 2_000 });
    expect(closed).toEqual(['api', 'consumer 2000', 'publisher', 'redis']);
  });

  it('runs every step even when one fails, then rejects with that failure', async () => {
    const teardown = new Teardown();
    const closed: string[] = [];
    teardown.add(() => void closed.push('admin'));
    teardown.add(() => Promise.reject(new Error('publisher disconnect failed')));
    teardown.add(() => void closed.push('api'));
    await expect(teardown.close()).rejects.toThrow('publisher disconnect failed');
    expect(closed).toEqual(['api', 'admin']);
  });

  it('rejects with every failure when several steps fail', async () => {
    const teardown = new Teardown();
    teardown.add(() => Promise.reject(new Error('a')));
    teardown.add(() => Promise.reject(new Error('b')));
    await expect(teardown.close()).rejects.toBeInstanceOf(AggregateError);
  });

  it('stops once however often it is asked', async () => {
    const teardown = new Teardown();
    let stops = 0;
    teardown.add(() => void (stops += 1));
    const first = teardown.close();
    expect(teardown.close()).toBe(first);
    await first;
    await teardown.close();
    expect(stops).toBe(1);
    expect(teardown.closing).toBe(true);
  });

  it('closes at once what is added after closing began', async () => {
    const teardown = new Teardown();
    await teardown.close();
    const closed = new Promise<void>((resolve) => teardown.add(() => resolve()));
    await expect(closed).resolves.toBeUndefined();
  });
});

describe('withTeardown', () => {
  it('closes what a failed start-up opened, newest first, and rethrows the start-up error', async () => {
    const closed: string[] = [];
    const start = withTeardown(async (teardown) => {
      teardown.add(() => void closed.push('pool'));
      teardown.add(() => Promise.reject(new Error('admin disconnect failed')));
      teardown.add(() => void closed.push('publisher'));
      await Promise.resolve();
      throw new Error('registry unreachable');
    });
    await expect(start).rejects.toThrow('registry unreachable');
    expect(closed).toEqual(['publisher', 'pool']);
  });

  it('leaves what a successful start-up opened running', async () => {
    const closed: string[] = [];
    const running = await withTeardown((teardown) => {
      teardown.add(() => void closed.push('consumer'));
      return Promise.resolve({ stop: () => teardown.close() });
    });
    expect(closed).toEqual([]);
    await running.stop();
    expect(closed).toEqual(['consumer']);
  });
});
