import { authorizedFetch, toolError, ToolFailure } from '@gatehouse/sdk';
import type { ErrorCode, ExecutionContext, ToolError } from '@gatehouse/sdk';
import { isBody } from './upstream-body.js';

/** The refunds service's error codes, as the Gatehouse codes an agent branches on. */
const UPSTREAM_CODES: Readonly<Record<string, ErrorCode>> = {
  NOT_FOUND: 'NOT_FOUND',
  VERSION_CONFLICT: 'VERSION_CONFLICT',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  IN_PROGRESS: 'IN_PROGRESS',
  INVALID_REQUEST: 'INVALID_ARGUMENT',
  CURRENCY_MISMATCH: 'INVALID_ARGUMENT',
  REFUND_EXCEEDS_BALANCE: 'INVALID_ARGUMENT',
};

/** How long the status query may take: it runs after a write's own deadline has passed. */
const STATUS_TIMEOUT_MS = 2_000;

/** The service's `{ error: { code, message, field?, current_version? } }` as a ToolError. */
export function upstreamToolError(body: unknown, fallback: string, options: { readonly retryable?: boolean } = {}): ToolError {
  const error = isBody(body) && isBody(body['error']) ? body['error'] : {};
  const { code: upstreamCode, message, field, current_version: currentVersion } = error;
  const code = UPSTREAM_CODES[typeof upstreamCode === 'string' ? upstreamCode : ''] ?? 'UPSTREAM_ERROR';
  return toolError(code, typeof message === 'string' ? message : fallback, {
    field: typeof field === 'string' && field !== 'Idempotency-Key' ? `/${field.replace(/\./g, '/')}` : undefined,
    details: typeof currentVersion === 'number' ? { current_version: currentVersion } : undefined,
    retryable: code === 'UPSTREAM_ERROR' ? options.retryable : undefined,
  });
}

/** What the status query of the service knows about an idempotency key. */
export type OperationAnswer =
  | { readonly status: 'succeeded'; readonly response: unknown }
  | { readonly status: 'failed'; readonly error: unknown }
  | { readonly status: 'unknown' };

interface Request {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly context: ExecutionContext;
  readonly body?: unknown;
  /** Sent as Idempotency-Key: the service stores it in the same transaction as the write. */
  readonly idempotencyKey?: string;
}

/**
 * The refunds service (the system of record), called with the call's assertion, as the tenant of
 * the run. Built once by the
 * pack's `setup` from REFUNDS_URL. Reads fail plainly; a write whose answer is lost or unreadable
 * fails as ambiguous, because the service may have committed it.
 */
export class RefundsClient {
  readonly #baseUrl: string;

  constructor(baseUrl: string) {
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /** `GET /orders/:id`: the whole order, internal fields included; callers keep only their view. */
  async order(orderId: string, context: ExecutionContext): Promise<unknown> {
    return this.#call({ method: 'GET', path: `/orders/${encodeURIComponent(orderId)}`, context });
  }

  /** `POST /orders/:id/refunds` under the executor's idempotency key. */
  async refund(orderId: string, body: unknown, idempotencyKey: string, context: ExecutionContext): Promise<unknown> {
    return this.#call({ method: 'POST', path: `/orders/${encodeURIComponent(orderId)}/refunds`, body, idempotencyKey, context });
  }

  /** `GET /operations/:key`: what happened under a key. Throws when the service cannot tell. */
  async operation(idempotencyKey: string, context: ExecutionContext): Promise<OperationAnswer> {
    const response = await authorizedFetch(context, `${this.#baseUrl}/operations/${encodeURIComponent(idempotencyKey)}`, {
      headers: { 'x-tenant': context.tenant, accept: 'application/json' },
      signal: AbortSignal.timeout(STATUS_TIMEOUT_MS),
    });
    if (response.status === 404) return { status: 'unknown' };
    if (!response.ok) throw new Error(`the status query answered HTTP ${response.status}`);
    const body: unknown = await response.json();
    if (isBody(body) && body['status'] === 'succeeded') return { status: 'succeeded', response: body['response'] };
    if (isBody(body) && body['status'] === 'failed') return { status: 'failed', error: body['error'] };
    return { status: 'unknown' };
  }

  async #call(request: Request): Promise<unknown> {
    const url = `${this.#baseUrl}${request.path}`;
    // The assertion proves the call — this request's method, path and query; the tenant header is a
    // check the service makes against it.
    const headers: Record<string, string> = {
      authorization: `Bearer ${await request.context.credential({ method: request.method, url })}`,
      'x-tenant': request.context.tenant,
      accept: 'application/json',
    };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
    const write = request.method === 'POST';
    let response: Response;
    try {
      response = await fetch(url, {
        method: request.method,
        headers,
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        signal: request.context.signal,
      });
    } catch (cause) {
      const timedOut = request.context.signal.aborted;
      const error = timedOut
        ? toolError('TIMEOUT', 'the refunds service did not answer in time', { retryable: true })
        : toolError('UPSTREAM_ERROR', 'the refunds service could not be reached', { retryable: true });
      throw new ToolFailure(error, { ambiguous: write, cause });
    }
    let text: string;
    try {
      text = await response.text();
    } catch (cause) {
      throw new ToolFailure(toolError('UPSTREAM_ERROR', 'the answer of the refunds service was cut off', { retryable: true }), {
        ambiguous: write,
        cause,
      });
    }
    let body: unknown;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch (cause) {
      const error = toolError('UPSTREAM_ERROR', `the refunds service answered HTTP ${response.status} with a body that is not JSON`, {
        retryable: true,
      });
      throw new ToolFailure(error, { ambiguous: write && response.ok, cause });
    }
    if (!response.ok) {
      throw new ToolFailure(
        upstreamToolError(body, `the refunds service answered HTTP ${response.status}`, {
          retryable: response.status >= 500 || response.status === 429,
        }),
      );
    }
    return body;
  }
}
