// The refunds service's configuration and request hashing: read once, refused by name.
import { describe, expect, it } from 'vitest';
import { argumentsSha256, refundsConfigFromEnv } from '@gatehouse/example-refunds-service';

describe('the refunds service configuration', () => {
  const KEYS = 'http://127.0.0.1:8092/.well-known/jwks.json';
  const assertions = { keys: KEYS, issuer: 'urn:gatehouse', audience: 'refunds' };

  it("takes the documented defaults when REFUNDS_* but the executors' keys are unset or empty", () => {
    const defaults = {
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/gatehouse',
      host: '127.0.0.1',
      port: 8094,
      schema: 'refunds',
      assertions,
    };
    expect(refundsConfigFromEnv({ REFUNDS_ASSERTION_KEYS: KEYS })).toEqual(defaults);
    expect(refundsConfigFromEnv({ REFUNDS_PORT: '', REFUNDS_DB_SCHEMA: '', REFUNDS_ASSERTION_KEYS: KEYS })).toEqual(defaults);
  });

  it("refuses to start without the executors' keys, since it could check no call", () => {
    expect(() => refundsConfigFromEnv({})).toThrow(/REFUNDS_ASSERTION_KEYS is required/);
    expect(() => refundsConfigFromEnv({ REFUNDS_ASSERTION_KEYS: '/nonexistent/jwks.json' })).toThrow(/neither an http\(s\) URL nor a file/);
  });

  it('reads every variable and refuses a bad one by name', () => {
    expect(
      refundsConfigFromEnv({
        REFUNDS_DATABASE_URL: 'postgresql://db/x',
        REFUNDS_HOST: '0.0.0.0',
        REFUNDS_PORT: '0',
        REFUNDS_DB_SCHEMA: 't_refunds_1',
        REFUNDS_ASSERTION_KEYS: KEYS,
        REFUNDS_ASSERTION_ISSUER: 'urn:gatehouse:prod',
        REFUNDS_ASSERTION_AUDIENCE: 'https://refunds.internal',
      }),
    ).toEqual({
      databaseUrl: 'postgresql://db/x',
      host: '0.0.0.0',
      port: 0,
      schema: 't_refunds_1',
      assertions: { keys: KEYS, issuer: 'urn:gatehouse:prod', audience: 'https://refunds.internal' },
    });
    expect(() => refundsConfigFromEnv({ REFUNDS_PORT: '80a' })).toThrow('REFUNDS_PORT must be an integer in 0..65535, got "80a"');
    expect(() => refundsConfigFromEnv({ REFUNDS_DB_SCHEMA: 'Refunds; drop' })).toThrow('schema name must match');
    expect(() => refundsConfigFromEnv({ REFUNDS_DATABASE_URL: 'mysql://db' })).toThrow('REFUNDS_DATABASE_URL must be a postgres:// URL');
  });
});

describe('the hash an idempotency key is claimed for', () => {
  it('is the same for the same body in any key order and differs for another body', () => {
    const body = { expected_version: 3, amount: { minor: 2_500, currency: 'EUR' }, reason: 'damaged' };
    const reordered = { reason: 'damaged', amount: { currency: 'EUR', minor: 2_500 }, expected_version: 3 };
    expect(argumentsSha256(reordered)).toBe(argumentsSha256(body));
    expect(argumentsSha256(body)).toMatch(/^[0-9a-f]{64}$/);
    expect(argumentsSha256({ ...body, amount: { minor: 2_501, currency: 'EUR' } })).not.toBe(argumentsSha256(body));
  });
});
