import { toolError, ToolFailure } from '@gatehouse/sdk';
import type { ErrorCode, ExecutionContext } from '@gatehouse/sdk';
import { isBody } from './upstream-body.js';

export interface ApiResponse {
  readonly status: number;
  readonly body: unknown;
}

export interface RequestOptions {
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
  const error = isBody(body) && isBody(body['error']) ? body['error'] : {};
  const { code: upstreamCode, message, field, current_version: currentVersion } = error;
  const code = UPSTREAM_CODES[typeof upstreamCode === 'string' ? upstreamCode : ''] ?? 'UPSTREAM_ERROR';
  return new ToolFailure(
    toolError(code, typeof message === 'string' ? message : `customers service answered HTTP ${status}`, {
      field: typeof field === 'string' ? `/${field.replace(/\./g, '/')}` : undefined,
      details: typeof currentVersion === 'number' ? { current_version: currentVersion } : undefined,
      retryable: code === 'UPSTREAM_ERROR' ? status >= 500 || status === 429 : undefined,
    }),
  );
}

/**
 * The customers service (the system of record), called with the call's assertion, as the tenant of
 * the run. Built once by the
 * pack's `setup` from CUSTOMERS_URL. Reads fail plainly; a write whose answer is lost or unreadable
 * fails as ambiguous, because the service may have committed it.
 */
export class CustomersClient {
  readonly #baseUrl: () => string;

  /** `baseUrl` is the service's root; a function is asked on every call (the env-reading compatibility exports). */
  constructor(baseUrl: string | (() => string)) {
    const trim = (url: string): string => url.replace(/\/+$/, '');
    if (typeof baseUrl === 'function') {
      this.#baseUrl = () => trim(baseUrl());
    } else {
      const fixed = trim(baseUrl);
      this.#baseUrl = () => fixed;
    }
  }

  /** The absolute URL of a path of the service. */
  url(path: string): string {
    return `${this.#baseUrl()}${path}`;
  }

  async call(options: RequestOptions): Promise<ApiResponse> {
    const url = this.url(options.path);
    // The assertion proves the call — this request's method, path and query; the tenant header is a
    // check the service makes against it.
    const headers: Record<string, string> = {
      authorization: `Bearer ${await options.context.credential({ method: options.method, url })}`,
      'x-tenant': options.context.tenant,
      accept: 'application/json',
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    const write = options.write === true;
    let response: Response;
    try {
      response = await fetch(url, {
        method: options.method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: options.context.signal,
      });
    } catch (cause) {
      const timedOut = options.context.signal.aborted;
      throw new ToolFailure(
        toolError(
          timedOut ? 'TIMEOUT' : 'UPSTREAM_ERROR',
          timedOut ? 'the customers service did not answer in time' : 'the customers service could not be reached',
          {
            retryable: true,
          },
        ),
        { ambiguous: write, cause },
      );
    }
    let text: string;
    try {
      text = await response.text();
    } catch (cause) {
      throw new ToolFailure(toolError('UPSTREAM_ERROR', 'the answer of the customers service was cut off', { retryable: true }), {
        ambiguous: write,
        cause,
      });
    }
    let body: unknown;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch (cause) {
      throw new ToolFailure(
        toolError('UPSTREAM_ERROR', `the customers service answered HTTP ${response.status} with a body that is not JSON`, {
          retryable: true,
        }),
        {
          ambiguous: write && response.ok,
          cause,
        },
      );
    }
    if (!response.ok) throw upstreamError(response.status, body);
    return { status: response.status, body };
  }
}
