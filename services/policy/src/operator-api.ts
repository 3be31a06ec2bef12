import type { FastifyInstance } from 'fastify';
import { canonicalJson, isErrorCode, toolError } from '@gatehouse/contracts';
import type { Catalog } from '@gatehouse/contracts';
import { errorResult, okResult, toStoredOutcome } from '@gatehouse/events';
import type { StoredOutcome, ToolResult } from '@gatehouse/events';
import type { IdempotencyStore } from '@gatehouse/state';

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
      if (record.state !== 'unknown')
        return reply.code(409).send({ error: { code: 'OUTCOME_ALREADY_KNOWN', message: `the outcome is already ${record.state}` } });
      const stored = JSON.parse(record.outcome) as StoredOutcome;
      const tool = options.catalog.get(stored.tool);
      const address = { command_id: stored.command_id, run_id: stored.run_id, tenant: stored.tenant, tool: stored.tool };
      const extras = { operationId: stored.operation_id, argumentsSha256: record.arguments_sha256 };
      let final: ToolResult;
      if (body.state === 'succeeded') {
        if (tool === undefined || body.result === undefined) {
          return reply
            .code(422)
            .send({ error: { code: 'INVALID_REQUEST', message: 'a success needs the result the system of record shows' } });
        }
        const valid = options.catalog.validateOutput(tool, body.result);
        if (!valid.ok)
          return reply.code(422).send({ error: { code: 'OUTPUT_INVALID', message: valid.error.message, field: valid.error.field } });
        final = okResult(address, canonicalJson(valid.value), extras);
      } else {
        const code = body.error?.code ?? 'UPSTREAM_ERROR';
        if (!isErrorCode(code)) return reply.code(422).send({ error: { code: 'INVALID_REQUEST', message: `unknown error code ${code}` } });
        final = errorResult(
          address,
          toolError(code, body.error?.message ?? 'the write did not happen', { retryable: false, details: { evidence: body.evidence } }),
          extras,
        );
      }
      const resolved = await options.idempotency.resolveUnknown(
        key,
        body.state,
        toStoredOutcome(final, `operator:${body.resolved_by}`),
        body.resolved_by,
      );
      if (resolved !== 'resolved')
        return reply.code(409).send({ error: { code: 'OUTCOME_ALREADY_KNOWN', message: 'resolved meanwhile by someone else' } });
      // With the headers the command's events carried: the same trace, and the asking instance's partition.
      await options.publish(final, stored.headers);
      request.log.info(
        { idempotency_key: key, command_id: stored.command_id, state: body.state, resolved_by: body.resolved_by },
        'unknown outcome resolved by an operator',
      );
      return { key, state: body.state, command_id: stored.command_id };
    },
  );
}
