/**
 * An error from the Kafka client and every error it wraps (`cause`, an aggregate's `errors`),
 * outermost first: the client reports a broker's answer, a lost connection or a timeout some
 * levels down.
 */
function kafkaErrorChain(error: unknown): object[] {
  const chain: object[] = [];
  const walk = (e: unknown, depth: number): void => {
    if (typeof e !== 'object' || e === null || depth > 5) return;
    chain.push(e);
    const { cause, errors } = e as { cause?: unknown; errors?: unknown };
    for (const inner of [cause, ...(Array.isArray(errors) ? (errors as unknown[]) : [])]) walk(inner, depth + 1);
  };
  walk(error, 0);
  return chain;
}

/**
 * The broker's error codes an error from the Kafka client carries (its `apiId`), its own and those
 * of every error it wraps, in that order. An authentication failure, which the client does not code
 * as the broker's answer, counts as SASL_AUTHENTICATION_FAILED.
 */
export function kafkaErrorCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (const e of kafkaErrorChain(error) as { apiId?: unknown; code?: unknown }[]) {
    if (typeof e.apiId === 'string') codes.push(e.apiId);
    if (e.code === 'PLT_KFK_AUTHENTICATION') codes.push('SASL_AUTHENTICATION_FAILED');
  }
  return codes;
}

/** The Kafka client's own failure codes along the chain (`PLT_KFK_NETWORK`, `PLT_KFK_TIMEOUT`…): how it failed where no broker answered. */
export function kafkaClientCodes(error: unknown): string[] {
  return (kafkaErrorChain(error) as { code?: unknown }[]).flatMap((e) => (typeof e.code === 'string' ? [e.code] : []));
}
