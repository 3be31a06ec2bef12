// The refunds service's configuration and request hashing: read once, refused by name.
import { describe, expect, it } from 'vitest';
import { argumentsSha256, refundsConfigFromEnv } from '@gatehouse/example-refunds-service';

describe('the refunds service configuration', () => {
  it('takes the documented defaults when REFUNDS_* are unset or empty', () => {
    const defaults = { databaseUrl: 'postgres://postgres@127.0.0.1:5432/gatehouse', host: '127.0.0.1', port: 8094, schema: 'refunds' };
    expect(refundsConfigFromEnv({})).toEqual(defaults);
    expect(refundsConfigFromEnv({ REFUNDS_PORT: '', REFUNDS_DB_SCHEMA: '' })).toEqual(defaults);
  });

  it('reads every variable and refuses a bad one by name', () => {
    expect(refundsConfigFromEnv({ REFUNDS_DATABASE_URL: 'postgresql://db/x', REFUNDS_HOST: '0.0.0.0', REFUNDS_PORT: '0', REFUNDS_DB_SCHEMA: 't_refunds_1' }))
      .toEqual({ databaseUrl: 'postgresql://db/x', host: '0.0.0.0', port: 0, schema: 't_refunds_1' });
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
