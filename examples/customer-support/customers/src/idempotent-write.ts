import type { Pool, PoolClient } from 'pg';
import { withTransaction } from './db.js';
import { errorBody, ServiceError } from './errors.js';
import type { IdempotencyRepository, KeyClaim } from './idempotency-repository.js';

/** The outcome of a write as the client sees it; failures here are stored under the key too. */
export interface WriteResult {
  readonly outcome: 'succeeded' | 'failed';
  readonly httpStatus: number;
  readonly body: unknown;
}

export interface WriteOutcome extends WriteResult {
  /** True when the stored response of an earlier request with this key was returned. */
  readonly replay: boolean;
}

/**
 * Runs `work` and records its result under the idempotency key in ONE transaction:
 * same key + same claim → the stored response; same key + another claim → IDEMPOTENCY_KEY_REUSED;
 * otherwise `work` runs and its result (success or business failure) is stored with the write.
 * Errors thrown by `work` roll everything back, key included.
 */
export async function runIdempotentWrite(
  pool: Pool,
  keys: IdempotencyRepository,
  claim: KeyClaim,
  work: (db: PoolClient) => Promise<WriteResult>,
): Promise<WriteOutcome> {
  return withTransaction(pool, async (db) => {
    if (!(await keys.claim(db, claim))) {
      const stored = await keys.find(db, claim.key);
      if (stored === undefined) throw new ServiceError('CONFLICT', 'idempotency key changed hands; retry', { idempotency_key: claim.key });
      const same =
        stored.tenant === claim.tenant &&
        stored.operation === claim.operation &&
        stored.targetId === claim.targetId &&
        stored.argumentsSha256 === claim.argumentsSha256;
      if (!same) {
        throw new ServiceError('IDEMPOTENCY_KEY_REUSED', 'this idempotency key was used with other arguments', {
          idempotency_key: claim.key,
          field: 'Idempotency-Key',
        });
      }
      if (stored.status === 'in_flight' || stored.httpStatus === null) {
        throw new ServiceError('CONFLICT', 'a request with this idempotency key is still in progress', { idempotency_key: claim.key });
      }
      return { outcome: stored.status, httpStatus: stored.httpStatus, body: stored.response, replay: true };
    }
    const result = await work(db);
    await keys.complete(db, claim.key, result.outcome, result.httpStatus, result.body);
    return { ...result, replay: false };
  });
}

/** A business failure stored under the key, so a retry or status query sees the same answer. */
export function failure(error: ServiceError): WriteResult {
  return { outcome: 'failed', httpStatus: error.httpStatus, body: errorBody(error.code, error.message, error.details) };
}
