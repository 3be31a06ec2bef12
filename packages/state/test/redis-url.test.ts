import { describe, expect, it } from 'vitest';
import { readRedisUrl, redisUrlFromEnv } from '@gatehouse/state';

const reasonOf = (url: string): string => {
  const reading = readRedisUrl(url);
  if (reading.ok) throw new Error(`${url} was accepted`);
  return reading.reason;
};

describe('REDIS_URL as @gatehouse/state reads it', () => {
  it('takes a URL without a cluster parameter as one server, exactly as written', () => {
    for (const url of ['redis://127.0.0.1:6379', 'rediss://:pw@redis.internal:6380/2', 'redis://127.0.0.1:6379?family=6']) {
      expect(readRedisUrl(url)).toEqual({ ok: true, target: { kind: 'server', url } });
    }
  });

  it('takes a cluster parameter as a Redis Cluster seeded by the URL’s node and the listed ones', () => {
    expect(readRedisUrl('redis://127.0.0.1:7000?cluster=127.0.0.1:7001,127.0.0.1:7002')).toEqual({
      ok: true,
      target: {
        kind: 'cluster',
        seeds: [
          { host: '127.0.0.1', port: 7000 },
          { host: '127.0.0.1', port: 7001 },
          { host: '127.0.0.1', port: 7002 },
        ],
        username: undefined,
        password: undefined,
        tls: false,
      },
    });
  });

  it('gives every node of a cluster the URL’s user, password and TLS, and accepts a lone seed', () => {
    expect(readRedisUrl('rediss://gate%40house:p%2Fw@redis-0.redis:6379/0?cluster')).toEqual({
      ok: true,
      target: { kind: 'cluster', seeds: [{ host: 'redis-0.redis', port: 6379 }], username: 'gate@house', password: 'p/w', tls: true },
    });
    expect(readRedisUrl('redis://[::1]:7000?cluster=[::1]:7001, [::1]:7002')).toMatchObject({
      ok: true,
      target: {
        seeds: [
          { host: '::1', port: 7000 },
          { host: '::1', port: 7001 },
          { host: '::1', port: 7002 },
        ],
      },
    });
  });

  it('refuses what a cluster cannot honour, naming why', () => {
    expect(reasonOf('redis://127.0.0.1:7000/3?cluster=127.0.0.1:7001')).toMatch(/only database 0/);
    expect(reasonOf('redis://127.0.0.1:7000?cluster=127.0.0.1:7001&family=6')).toMatch(/no parameter but `cluster` \(got family\)/);
    expect(reasonOf('redis://127.0.0.1:7000?cluster=127.0.0.1')).toMatch(/"127\.0\.0\.1" is not host:port/);
    expect(reasonOf('redis://127.0.0.1:7000?cluster=:pw@127.0.0.1:7001')).toMatch(/is not host:port/);
    expect(reasonOf('redis://127.0.0.1?cluster=127.0.0.1:7001')).toMatch(/first node as host:port/);
    expect(reasonOf('http://127.0.0.1:7000?cluster=127.0.0.1:7001')).toBe('not a redis:// or rediss:// URL');
    expect(reasonOf('not a url')).toBe('not a URL');
  });

  it('refuses a bad cluster URL at start-up without echoing its password', () => {
    const env = { REDIS_URL: 'redis://:hunter2@127.0.0.1:7000/1?cluster=127.0.0.1:7001' };
    expect(() => redisUrlFromEnv(env)).toThrow(/REDIS_URL is refused: a Redis Cluster has only database 0/);
    expect(() => redisUrlFromEnv(env)).not.toThrow(/hunter2/);
    expect(redisUrlFromEnv({ REDIS_URL: 'redis://127.0.0.1:7000?cluster=127.0.0.1:7001' })).toBe(
      'redis://127.0.0.1:7000?cluster=127.0.0.1:7001',
    );
  });
});
