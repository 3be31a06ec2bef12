import { toolError } from '@gatehouse/contracts';
import type { ErrorCode, ExecutionContext, StatusAnswer } from '@gatehouse/contracts';
import { customersUrl } from '../customers-api.js';

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
  key: string,
  context: ExecutionContext,
  toResult: (response: unknown) => unknown,
  conflictNext?: string,
): Promise<StatusAnswer> {
  const response = await fetch(`${customersUrl()}/operations/${encodeURIComponent(key)}`, {
    headers: { 'x-tenant': context.tenant, accept: 'application/json' },
    signal: AbortSignal.timeout(2_000),
  });
  if (response.status === 404) return { state: 'unknown' };
  if (!response.ok) throw new Error(`status query answered HTTP ${response.status}`);
  const body = (await response.json()) as { status?: string; response?: unknown; error?: { code?: string; message?: string; current_version?: number } };
  if (body.status === 'succeeded') return { state: 'succeeded', result: toResult(body.response) };
  if (body.status === 'failed') {
    const code = KNOWN[body.error?.code ?? ''] ?? 'UPSTREAM_ERROR';
    const details = body.error?.current_version === undefined ? undefined : { current_version: body.error.current_version };
    const next = code === 'VERSION_CONFLICT' ? conflictNext : undefined;
    return { state: 'failed', error: toolError(code, body.error?.message ?? 'the operation failed', { details, next, retryable: false }) };
  }
  return { state: 'unknown' };
}
