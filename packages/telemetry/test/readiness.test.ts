import { describe, expect, it } from 'vitest';
import { checkReadiness } from '@gatehouse/telemetry';

describe('checkReadiness', () => {
  it('is ready when every check answers true', async () => {
    expect(await checkReadiness({ redis: () => Promise.resolve(true), kafka: () => Promise.resolve(true) })).toEqual({
      ready: true,
      checks: { redis: 'ok', kafka: 'ok' },
    });
  });

  it('names the check that failed, threw or did not answer in time', async () => {
    const readiness = await checkReadiness(
      {
        redis: () => Promise.resolve(true),
        kafka: () => Promise.resolve(false),
        registry: () => Promise.reject(new Error('connect ECONNREFUSED')),
        slow: () => new Promise<boolean>(() => undefined),
      },
      50,
    );
    expect(readiness).toEqual({
      ready: false,
      checks: { redis: 'ok', kafka: 'not ready', registry: 'connect ECONNREFUSED', slow: 'no answer within 50 ms' },
    });
  });
});
