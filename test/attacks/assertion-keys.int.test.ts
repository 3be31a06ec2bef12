// Surface: where a system of record gets the executors' call-assertion keys (docs/threat-model.md,
// "P4"). The attacker: anyone on the network path between a system of record and the executors'
// ops port, who answers the key-set request with a set of their own and then mints assertions with
// its key. Here that path is a server of the test's own on this host, reached by the host's name, as
// a path attacker answers for `executor:8092`. The promise: a key set is never taken over plain HTTP
// from another host, so the attacker's keys are never fetched, and the reference service refuses to
// start on such a setting rather than serve calls it cannot trust.
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customersConfigFromEnv, startCustomersService, tablesIn } from '@gatehouse/customers';
import { assertionJwks } from '@gatehouse/identity';
import { CallAssertionVerifier } from '@gatehouse/sdk';
import { DATABASE_URL } from '../support/approval.js';
import { TEST_ASSERTION_ISSUER } from '../support/signing.js';
import { logger } from '../support/stack.js';

describe('an attacker on the path between a system of record and the executors’ key set', () => {
  let hostile: Server;
  let requests = 0;
  let url = '';

  beforeAll(async () => {
    // The attacker's own key, published as if it were the executors'.
    const { publicKey } = generateKeyPairSync('ed25519');
    const body = JSON.stringify(assertionJwks(new Map([['exec-2026-12', publicKey]])));
    hostile = createServer((_request, response) => {
      requests += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => hostile.listen(0, '0.0.0.0', resolve));
    url = `http://${hostname()}:${(hostile.address() as AddressInfo).port}/.well-known/jwks.json`;
  });
  afterAll(async () => {
    await new Promise((resolve) => hostile.close(resolve));
  });

  it('cannot get a verifier to take its key set over plain HTTP from another host: refused when built, nothing fetched', () => {
    for (const keys of [url, new URL(url), 'http://executor.gatehouse.svc.cluster.local:8092/.well-known/jwks.json']) {
      expect(() => new CallAssertionVerifier({ issuer: TEST_ASSERTION_ISSUER, audience: 'customers', keys })).toThrow(
        /plain HTTP from another host/,
      );
    }
    expect(requests).toBe(0);
  });

  it('cannot get the customers service to start on that key set: it refuses, and nothing is fetched', async () => {
    const db = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    const schema = `t_keys_${Date.now().toString(36)}`;
    try {
      const config = customersConfigFromEnv({
        DATABASE_URL,
        CUSTOMERS_DB_SCHEMA: schema,
        CUSTOMERS_PORT: '0',
        CUSTOMERS_ASSERTION_KEYS: url,
        CUSTOMERS_ASSERTION_ISSUER: TEST_ASSERTION_ISSUER,
      });
      await expect(startCustomersService(config, logger)).rejects.toThrow(/plain HTTP from another host/);
    } finally {
      await db.query(`DROP SCHEMA IF EXISTS ${tablesIn(schema).schema} CASCADE`);
      await db.end();
    }
    expect(requests).toBe(0);
  });
});
