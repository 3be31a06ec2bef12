import { toolError, ToolFailure } from '@gatehouse/contracts';
import type { ErrorCode, ExecutionContext } from '@gatehouse/contracts';

/** Where the customers service listens; read once. */
export function customersUrl(): string {
  return (process.env['CUSTOMERS_URL'] ?? 'http://127.0.0.1:8090').replace(/\/+$/, '');
}

export interface ApiResponse {
  readonly status: number;
  readonly body: unknown;
}

interface RequestOptions {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly context: ExecutionContext;
  readonly body?: unknown;
  /** Sent as Idempotency-Key: the downstream stores it in the same transaction as the write. */
  readonly idempotencyKey?: string;
  /** A write: a lost answer may hide a committed effect. */
  readonly write?: boolean;
}

const UPSTREAM_CODES: Readonly<Record<string, ErrorCode>> = {
  NOT_FOUND: 'NOT_FOUND',
  VERSION_CONFLICT: 'VERSION_CONFLICT',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  INVALID_REQUEST: 'INVALID_ARGUMENT',
};

function upstreamError(status: number, body: unknown): ToolFailure {
  const error = (body as { error?: { code?: unknown; message?: unknown; field?: unknown; current_version?: unknown } } | null)?.error;
  const upstreamCode = typeof error?.code === 'string' ? error.code : '';
  const code = UPSTREAM_CODES[upstreamCode] ?? 'UPSTREAM_ERROR';
  const message = typeof error?.message === 'string' ? error.message : `customers service answered HTTP ${status}`;
  const field = typeof error?.field === 'string' ? `/${error.field.replace(/\./g, '/')}` : undefined;
  const details = typeof error?.current_version === 'number' ? { current_version: error.current_version } : undefined;
  const retryable = code === 'UPSTREAM_ERROR' ? status >= 500 || status === 429 : undefined;
  return new ToolFailure(toolError(code, message, { field, details, retryable }));
}

/**
 * One call to the customers service, as the tenant of the run. Reads fail plainly; a write whose
 * answer is lost or unreadable fails as ambiguous, because the service may have committed it.
 */
export async function callCustomers(options: RequestOptions): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'x-tenant': options.context.tenant, accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  let response: Response;
  try {
    response = await fetch(`${customersUrl()}${options.path}`, {
      method: options.method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: options.context.signal,
    });
  } catch (cause) {
    const timedOut = options.context.signal.aborted;
    throw new ToolFailure(
      toolError(timedOut ? 'TIMEOUT' : 'UPSTREAM_ERROR', timedOut ? 'the customers service did not answer in time' : 'the customers service could not be reached', {
        retryable: true,
      }),
      { ambiguous: options.write === true, cause },
    );
  }
  let text: string;
  try {
    text = await response.text();
  } catch (cause) {
    throw new ToolFailure(toolError('UPSTREAM_ERROR', 'the answer of the customers service was cut off', { retryable: true }), {
      ambiguous: options.write === true,
      cause,
    });
  }
  let body: unknown;
  try {
    body = text === '' ? null : (JSON.parse(text) as unknown);
  } catch (cause) {
    throw new ToolFailure(toolError('UPSTREAM_ERROR', `the customers service answered HTTP ${response.status} with a body that is not JSON`, { retryable: true }), {
      ambiguous: options.write === true && response.ok,
      cause,
    });
  }
  if (!response.ok) throw upstreamError(response.status, body);
  return { status: response.status, body };
}

/** Reads a field of an upstream body, failing (ambiguously, for writes) when its shape is not the documented one. */
export function expectShape<T>(body: unknown, check: (b: Record<string, unknown>) => T | undefined, write: boolean): T {
  const value = typeof body === 'object' && body !== null ? check(body as Record<string, unknown>) : undefined;
  if (value === undefined) {
    throw new ToolFailure(toolError('UPSTREAM_ERROR', 'the customers service answered with an unexpected shape', { retryable: !write }), {
      ambiguous: write,
    });
  }
  return value;
}
