import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from '@gatehouse/runtime';
import type { Refusal } from '@gatehouse/runtime';
import { redisUrlFromEnv } from '@gatehouse/state';

function refusalOf(raw: string): Refusal | undefined {
  try {
    readConfig(['REDIS_URL'], { REDIS_URL: raw });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).refusals.find((r) => r.variable === 'REDIS_URL');
  }
  return undefined;
}

describe('REDIS_URL naming a Redis Cluster', () => {
  it('is read as given, exactly as @gatehouse/state reads it', () => {
    for (const url of ['redis://127.0.0.1:7000?cluster=127.0.0.1:7001,127.0.0.1:7002', 'rediss://:pw@redis-0.redis:6379?cluster']) {
      expect(readConfig(['REDIS_URL'], { REDIS_URL: url }).REDIS_URL).toBe(url);
      expect(redisUrlFromEnv({ REDIS_URL: url })).toBe(url);
    }
  });

  it('is refused at start-up when a cluster cannot honour it, naming why and never the password', () => {
    expect(refusalOf('redis://:hunter2-password@127.0.0.1:7000/2?cluster=127.0.0.1:7001')).toEqual({
      variable: 'REDIS_URL',
      reason: 'a Redis Cluster has only database 0; drop the /<db> path',
    });
    expect(refusalOf('redis://127.0.0.1:7000?cluster=127.0.0.1:7001,node-b')?.reason).toBe('the `cluster` entry "node-b" is not host:port');
    expect(refusalOf('redis://127.0.0.1:7000?cluster=127.0.0.1:7001&db=1')?.reason).toBe(
      'a cluster URL takes no parameter but `cluster` (got db)',
    );
  });
});
