/**
 * The broker's error codes an error from a Kafka client carries, its own and those of every error
 * it wraps (`cause`, `originalError`, an aggregate's `errors`), in that order: kafkajs names the
 * code `type`, @platformatic/kafka `apiId`. Authentication failures, which neither client codes as
 * the broker's answer, count as SASL_AUTHENTICATION_FAILED.
 */
export function kafkaErrorCodes(error: unknown): string[] {
  const codes: string[] = [];
  collect(error, 0, codes);
  return codes;
}

function collect(error: unknown, depth: number, codes: string[]): void {
  if (typeof error !== 'object' || error === null || depth > 5) return;
  const e = error as {
    type?: unknown;
    apiId?: unknown;
    name?: unknown;
    code?: unknown;
    cause?: unknown;
    originalError?: unknown;
    errors?: unknown;
  };
  for (const code of [e.type, e.apiId]) if (typeof code === 'string') codes.push(code);
  if (e.name === 'KafkaJSSASLAuthenticationError' || e.code === 'PLT_KFK_AUTHENTICATION') codes.push('SASL_AUTHENTICATION_FAILED');
  for (const inner of [e.cause, e.originalError, ...(Array.isArray(e.errors) ? (e.errors as unknown[]) : [])])
    collect(inner, depth + 1, codes);
}
