import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerChecks, healthOf, kafkaReady, postgresReady, redisReady, registryReady } from '@gatehouse/runtime';
import type { ClusterAdmin } from '@gatehouse/runtime';

const admin = (brokers: number): ClusterAdmin => ({
  brokerCount: () => Promise.resolve(brokers),
});
const member = (joined: boolean) => ({ hasJoined: () => joined });

describe('healthOf: /healthz and /readyz of every service', () => {
  it('answers /readyz 200 with { ready, checks } when every check says ok', async () => {
    const health = healthOf({ kafka: () => Promise.resolve(true), redis: () => Promise.resolve(true) });
    expect(await health.ready()).toEqual({ statusCode: 200, body: { ready: true, checks: { kafka: 'ok', redis: 'ok' } } });
  });

  it('answers /readyz 503 with the same shape, naming what each failing check said', async () => {
    const health = healthOf({ postgres: () => Promise.reject(new Error('connect ECONNREFUSED')), redis: () => Promise.resolve(true) });
    expect(await health.ready()).toEqual({
      statusCode: 503,
      body: { ready: false, checks: { postgres: 'connect ECONNREFUSED', redis: 'ok' } },
    });
  });

  it('answers /healthz { status: up } without asking any dependency', () => {
    let asked = 0;
    const health = healthOf({ kafka: () => Promise.resolve(++asked > 0) });
    expect(health.live()).toEqual({ statusCode: 200, body: { status: 'up' } });
    expect(asked).toBe(0);
  });
});

describe('the readiness checks', () => {
  it('reports Kafka not ready until the member has joined its consumer group, even while brokers answer', async () => {
    const before = await healthOf({ kafka: kafkaReady(admin(1), member(false)) }).ready();
    expect(before.body.checks).toEqual({ kafka: 'not yet a member of its consumer group' });
    const after = await healthOf({ kafka: kafkaReady(admin(1), member(true)) }).ready();
    expect(after.body.checks).toEqual({ kafka: 'ok' });
  });

  it('reports Kafka not ready when the cluster lists no broker', async () => {
    expect((await healthOf({ kafka: kafkaReady(admin(0), member(true)) }).ready()).body.checks).toEqual({ kafka: 'not ready' });
  });

  it('asks Redis for PONG and PostgreSQL for SELECT 1', async () => {
    const queries: string[] = [];
    const health = healthOf({
      redis: redisReady({ ping: () => Promise.resolve('PONG') }),
      stale: redisReady({ ping: () => Promise.resolve('LOADING') }),
      postgres: postgresReady({ query: (sql) => Promise.resolve(queries.push(sql)) }),
    });
    expect((await health.ready()).body.checks).toEqual({ redis: 'ok', stale: 'not ready', postgres: 'ok' });
    expect(queries).toEqual(['SELECT 1']);
  });

  it('gives every consuming service the same three checks: kafka, registry and redis', () => {
    const checks = consumerChecks({ admin: admin(1), events: { registryUrl: 'http://127.0.0.1:1' } }, member(true), {
      ping: () => Promise.resolve('PONG'),
    });
    expect(Object.keys(checks)).toEqual(['kafka', 'registry', 'redis']);
  });

  describe('the registry check', () => {
    let status = 200;
    const registry = createServer((_request, response) => response.writeHead(status).end('[]'));
    let url = '';
    beforeAll(async () => {
      await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(registry.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => registry.close(() => resolve())));

    it('is ok while the registry lists its subjects, not ready when it answers an error', async () => {
      status = 200;
      expect((await healthOf({ registry: registryReady(url) }).ready()).body.checks).toEqual({ registry: 'ok' });
      status = 500;
      expect((await healthOf({ registry: registryReady(url) }).ready()).body.checks).toEqual({ registry: 'not ready' });
    });
  });
});
