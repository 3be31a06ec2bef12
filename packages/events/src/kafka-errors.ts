/**
 * The broker's error codes an error from the Kafka client carries (its `apiId`), its own and those
 * of every error it wraps (`cause`, an aggregate's `errors`), in that order. An authentication
 * failure, which the client does not code as the broker's answer, counts as SASL_AUTHENTICATION_FAILED.
 */
export function kafkaErrorCodes(error: unknown): string[] {
  const codes: string[] = [];
  collect(error, 0, codes);
  return codes;
}

function collect(error: unknown, depth: number, codes: string[]): void {
  if (typeof error !== 'object' || error === null || depth > 5) return;
  const e = error as { apiId?: unknown; code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.apiId === 'string') codes.push(e.apiId);
  if (e.code === 'PLT_KFK_AUTHENTICATION') codes.push('SASL_AUTHENTICATION_FAILED');
  for (const inner of [e.cause, ...(Array.isArray(e.errors) ? (e.errors as unknown[]) : [])]) collect(inner, depth + 1, codes);
}
