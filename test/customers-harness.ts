import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Pool } from 'pg';
import { buildApp, ensureDatabase, migrate, seedIfEmpty, tablesIn } from '@gatehouse/customers';
import type { Tables } from '@gatehouse/customers';
import { createLogger } from '@gatehouse/telemetry';

export const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/gatehouse';
const logger = createLogger('customers-test', { level: process.env['LOG_LEVEL'] ?? 'error' });

export interface TestServiceOptions {
  readonly faults?: boolean;
  readonly exportStepMs?: number;
}

export interface Reply<T> {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed JSON body, as the caller expects it to be (undefined when not JSON). */
  readonly body: T;
}

export interface CallOptions {
  readonly tenant?: string | null;
  readonly key?: string;
  readonly body?: unknown;
  readonly fault?: string;
  readonly signal?: AbortSignal;
}

/** A customers service listening on a random port over its own, freshly seeded PostgreSQL schema. */
export interface TestService {
  readonly url: string;
  readonly schema: string;
  readonly t: Tables;
  /** A pool for asserting on rows directly. */
  readonly db: Pool;
  call<T = unknown>(method: string, path: string, options?: CallOptions): Promise<Reply<T>>;
  close(): Promise<void>;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  await ensureDatabase(DATABASE_URL);
  const schema = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const db = new pg.Pool({ connectionString: DATABASE_URL, max: 30 });
  await migrate(db, schema);
  await seedIfEmpty(db, schema);
  const app = buildApp({
    pool: db,
    logger,
    schema,
    ...(options.faults === undefined ? {} : { faults: options.faults }),
    ...(options.exportStepMs === undefined ? {} : { exportStepMs: options.exportStepMs }),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('service did not bind a TCP port');
  const url = `http://127.0.0.1:${address.port}`;
  return {
    url,
    schema,
    t: tablesIn(schema),
    db,
    async call<T>(method: string, path: string, o: CallOptions = {}): Promise<Reply<T>> {
      const headers: Record<string, string> = {};
      if (o.tenant !== null) headers['x-tenant'] = o.tenant ?? 'acme';
      if (o.key !== undefined) headers['idempotency-key'] = o.key;
      if (o.fault !== undefined) headers['x-fault'] = o.fault;
      if (o.body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${url}${path}`, {
        method,
        headers,
        ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
        ...(o.signal === undefined ? {} : { signal: o.signal }),
      });
      const text = await response.text();
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { status: response.status, headers: response.headers, text, body: body as T };
    },
    async close() {
      await app.close();
      await db.query(`DROP SCHEMA IF EXISTS ${tablesIn(schema).schema} CASCADE`);
      await db.end();
    },
  };
}

/** A fresh idempotency key. */
export function newKey(label = 'k'): string {
  return `${label}-${randomUUID()}`;
}

/** Polls `check` until it returns a value other than undefined; rejects after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
