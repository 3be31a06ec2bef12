import type { FastifyInstance } from 'fastify';
import { canonicalJson, isErrorCode, sha256Hex, toolError } from '@gatehouse/contracts';
import type { Catalog } from '@gatehouse/contracts';
import { errorResult, fromStoredOutcome, okResult, toStoredOutcome } from '@gatehouse/events';
import type { ResultAddress, StoredOutcome, ToolResult } from '@gatehouse/events';
import { ReplicationUnconfirmed } from '@gatehouse/state';
import type { IdempotencyStore, Resolution } from '@gatehouse/state';

export interface OperatorApiOptions {
  readonly idempotency: IdempotencyStore;
  readonly catalog: Catalog;
  /** Publishes the final result, signed by this service, so a reader can tell an operator's answer from a forged one. */
  readonly publish: (result: ToolResult, headers: Record<string, string> | undefined) => Promise<void>;
}

interface ResolveBody {
  state: 'succeeded' | 'failed';
  evidence: string;
  resolved_by: string;
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
}

const resolveSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['state', 'evidence', 'resolved_by'],
  properties: {
    state: { enum: ['succeeded', 'failed'] },
    evidence: { type: 'string', minLength: 1, maxLength: 2000 },
    resolved_by: { type: 'string', minLength: 1, maxLength: 200 },
    result: { type: 'object' },
    error: {
      type: 'object',
      additionalProperties: false,
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string', minLength: 1, maxLength: 500 } },
    },
  },
} as const;

/**
 * People settle what Gatehouse could not: an operator looks up a write whose outcome is unknown
 * and resolves it — succeeded (with the evidence and the result the system of record shows) or
 * failed — and the final result is published to the agent's command.
 */
export function registerOperatorRoutes(app: FastifyInstance, options: OperatorApiOptions): void {
  // Trusted callers only: the control API's hook has checked who is asking before these run.
  app.get<{ Params: { key: string } }>('/operations/:key', async (request, reply) => {
    const record = await options.idempotency.get(request.params.key);
    if (record === undefined) return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'no operation under this key' } });
    const outcome = record.outcome === null ? null : (JSON.parse(record.outcome) as StoredOutcome);
    return {
      key: request.params.key,
      state: record.state,
      arguments_sha256: record.arguments_sha256,
      created_at: new Date(record.created_at).toISOString(),
      updated_at: new Date(record.updated_at).toISOString(),
      command_id: outcome?.command_id ?? null,
      run_id: outcome?.run_id ?? null,
      tenant: outcome?.tenant ?? null,
      tool: outcome?.tool ?? null,
      status: outcome?.status ?? null,
      error_code: outcome?.error?.code ?? null,
    };
  });

  app.post<{ Params: { key: string }; Body: ResolveBody }>(
    '/operations/:key/resolve',
    { schema: { body: resolveSchema } },
    async (request, reply) => {
      const { key } = request.params;
      const body = request.body;
      const record = await options.idempotency.get(key);
      if (record === undefined || record.outcome === null)
        return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'no operation under this key' } });
      const stored = JSON.parse(record.outcome) as StoredOutcome;
      const final = finalResult(body, stored, record.arguments_sha256, options.catalog);
      if ('refusal' in final) return reply.code(422).send({ error: final.refusal });
      let resolved: Resolution;
      try {
        resolved = await options.idempotency.resolveUnknown(key, {
          state: body.state,
          // With the headers the command's events carried: the same trace, and the asking instance's partition.
          outcome: toStoredOutcome(final.result, `operator:${body.resolved_by}`, stored.headers),
          by: body.resolved_by,
          fingerprint: sha256Hex(canonicalJson({ key, body })),
        });
      } catch (error) {
        if (!(error instanceof ReplicationUnconfirmed)) throw error;
        return reply.code(503).send({ error: { code: 'STORE_UNCONFIRMED', message: error.message } });
      }
      if (resolved.kind !== 'resolved')
        return reply.code(409).send({ error: { code: 'OUTCOME_ALREADY_KNOWN', message: `the outcome is already ${record.state}` } });
      // The outcome stored by this resolution, or by the same resolution before whose answer did not go out.
      const answer = fromStoredOutcome(resolved.outcome, addressOf(stored), record.arguments_sha256);
      await options.publish(answer.result, answer.outcome.headers);
      await options.idempotency.resolutionPublished(key);
      request.log.info(
        { idempotency_key: key, command_id: stored.command_id, state: body.state, resolved_by: body.resolved_by },
        'unknown outcome resolved by an operator',
      );
      return { key, state: body.state, command_id: stored.command_id };
    },
  );
}

const addressOf = (stored: StoredOutcome): ResultAddress => ({
  command_id: stored.command_id,
  run_id: stored.run_id,
  tenant: stored.tenant,
  tool: stored.tool,
});

/** The result an operator's resolution publishes, or why the request cannot be one. */
function finalResult(
  body: ResolveBody,
  stored: StoredOutcome,
  argumentsSha256: string,
  catalog: Catalog,
): { readonly result: ToolResult } | { readonly refusal: { code: string; message: string; field?: string | undefined } } {
  const address = addressOf(stored);
  const extras = { operationId: stored.operation_id, argumentsSha256 };
  if (body.state === 'succeeded') {
    const tool = catalog.get(stored.tool);
    if (tool === undefined || body.result === undefined)
      return { refusal: { code: 'INVALID_REQUEST', message: 'a success needs the result the system of record shows' } };
    const valid = catalog.validateOutput(tool, body.result);
    if (!valid.ok) return { refusal: { code: 'OUTPUT_INVALID', message: valid.error.message, field: valid.error.field } };
    return { result: okResult(address, canonicalJson(valid.value), extras) };
  }
  const code = body.error?.code ?? 'UPSTREAM_ERROR';
  if (!isErrorCode(code)) return { refusal: { code: 'INVALID_REQUEST', message: `unknown error code ${code}` } };
  const error = toolError(code, body.error?.message ?? 'the write did not happen', {
    retryable: false,
    details: { evidence: body.evidence },
  });
  return { result: errorResult(address, error, extras) };
}
