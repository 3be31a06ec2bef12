import { afterEach, describe, expect, it, vi } from 'vitest';
import { claimWhenFree, keepRenewing } from '@gatehouse/state';
import type { Claim } from '@gatehouse/state';

afterEach(() => {
  vi.useRealTimers();
});

const busy: Claim = { kind: 'in_progress', owner: 'other/1', leaseLeftMs: 100, commandId: 'c' };

describe('claimWhenFree', () => {
  it('claims again while another live owner holds the entry, and answers what the first other claim finds', async () => {
    vi.useFakeTimers();
    const found: Claim[] = [busy, busy, { kind: 'orphaned', previousOwner: 'other/1' }];
    const asked: number[] = [];
    const claiming = claimWhenFree(() => {
      asked.push(Date.now());
      return Promise.resolve(found.shift() ?? { kind: 'claimed' });
    }, Date.now() + 10_000);
    await vi.runAllTimersAsync();
    await expect(claiming).resolves.toEqual({ kind: 'orphaned', previousOwner: 'other/1' });
    expect(asked).toHaveLength(3);
    // Each wait is the lease left, within 20–250 ms.
    expect(asked[1]! - asked[0]!).toBe(100);
  });

  it('answers in_progress once its deadline has passed', async () => {
    vi.useFakeTimers();
    let claims = 0;
    const claiming = claimWhenFree(() => {
      claims += 1;
      return Promise.resolve(busy);
    }, Date.now() + 350);
    await vi.runAllTimersAsync();
    await expect(claiming).resolves.toEqual(busy);
    expect(claims).toBe(5);
  });
});

describe('keepRenewing', () => {
  it('renews every third of the lease until stopped, and goes on after a renewal that failed', async () => {
    vi.useFakeTimers();
    let renewals = 0;
    const stop = keepRenewing(() => {
      renewals += 1;
      return renewals === 1 ? Promise.reject(new Error('Redis away')) : Promise.resolve(true);
    }, 3_000);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(renewals).toBe(3);
    stop();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(renewals).toBe(3);
  });
});
