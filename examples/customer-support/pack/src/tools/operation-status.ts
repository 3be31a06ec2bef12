import { authorizedFetch, toolError } from '@gatehouse/sdk';
import type { ErrorCode, ExecutionContext, StatusAnswer } from '@gatehouse/sdk';
import type { CustomersClient } from '../customers-client.js';
import { isBody } from '../upstream-body.js';

const KNOWN: Readonly<Record<string, ErrorCode>> = {
  NOT_FOUND: 'NOT_FOUND',
  VERSION_CONFLICT: 'VERSION_CONFLICT',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
};

/**
 * Asks the customers service what happened under an idempotency key: succeeded (with the stored
 * response), failed (with the stored error) or unknown. Throws when the service cannot answer.
 */
export async function operationStatus(
  customers: CustomersClient,
  key: string,
  context: ExecutionContext,
  toResult: (response: unknown) => unknown,
  conflictNext?: string,
): Promise<StatusAnswer> {
  const response = await authorizedFetch(context, customers.url(`/operations/${encodeURIComponent(key)}`), {
    headers: { 'x-tenant': context.tenant, accept: 'application/json' },
    signal: AbortSignal.timeout(2_000),
  });
  if (response.status === 404) return { state: 'unknown' };
  if (!response.ok) throw new Error(`status query answered HTTP ${response.status}`);
  const body: unknown = await response.json();
  const status = isBody(body) ? body['status'] : undefined;
  if (isBody(body) && status === 'succeeded') return { state: 'succeeded', result: toResult(body['response']) };
  if (isBody(body) && status === 'failed') {
    const error = isBody(body['error']) ? body['error'] : {};
    const { code: upstreamCode, message, current_version: currentVersion } = error;
    const code = KNOWN[typeof upstreamCode === 'string' ? upstreamCode : ''] ?? 'UPSTREAM_ERROR';
    const details = typeof currentVersion === 'number' ? { current_version: currentVersion } : undefined;
    const next = code === 'VERSION_CONFLICT' ? conflictNext : undefined;
    return {
      state: 'failed',
      error: toolError(code, typeof message === 'string' ? message : 'the operation failed', { details, next, retryable: false }),
    };
  }
  return { state: 'unknown' };
}
