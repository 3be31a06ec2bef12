import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson, isErrorCode, sha256Hex, toolError } from '@gatehouse/contracts';
import type { Catalog } from '@gatehouse/contracts';
import { errorResult, fromStoredOutcome, okResult, toStoredOutcome } from '@gatehouse/events';
import type { AnswerScan, ResultAddress, StoredOutcome, ToolResult } from '@gatehouse/events';
import { ReplicationUnconfirmed } from '@gatehouse/state';
import type { ClaimLedger, LedgerRecord, Resolution, Run } from '@gatehouse/state';
import type { Operator, Operators } from './operators.js';

export interface OperatorApiOptions {
  readonly idempotency: ClaimLedger;
  readonly catalog: Catalog;
  /** Who may look up and resolve operations: people with the operator role, in their tenants. */
  readonly operators: Operators;
  /** The runs, for the tenant of an operation that has no outcome yet (its key begins with its run's id). */
  readonly runs: { get(runId: string): Promise<Run | undefined> };
  /** Publishes the final result, signed by this service, so a reader can tell an operator's answer from a forged one. */
  readonly publish: (result: ToolResult, headers: Record<string, string> | undefined) => Promise<void>;
  /** What gatehouse.results holds of an answer: a resolution retried after its answer went out is not published again. */
  readonly answers: Pick<AnswerScan, 'published'>;
  /** Counts a caller refused by who they are (an IDENTITY_REFUSALS code). */
  readonly refused?: (code: string) => void;
}

/** Marks the operator routes: they prove their caller themselves (a person), not by the control API's trusted-caller hook. */
const OPERATOR_ROUTE = { operator: true } as const;

interface ResolveBody {
  state: 'succeeded' | 'failed';
  evidence: string;
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
}

// No `resolved_by`: who resolves is the person the token proves. A body that still names one is refused (400).
const resolveSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['state', 'evidence'],
  properties: {
    state: { enum: ['succeeded', 'failed'] },
    evidence: { type: 'string', minLength: 1, maxLength: 2000 },
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
 * A body that still names who resolves (`resolved_by`, as clients before identities sent) is refused,
 * not stripped with the other unknown properties: its sender must learn that the name is not taken.
 */
async function refuseNamedResolver(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const body = request.body;
  if (typeof body !== 'object' || body === null || !Object.hasOwn(body, 'resolved_by')) return undefined;
  return reply.code(400).send({
    error: {
      code: 'INVALID_REQUEST',
      message: 'resolved_by is not taken: a resolution is recorded under the person the bearer token proves',
      field: 'resolved_by',
    },
  });
}

const NOT_FOUND = { error: { code: 'NOT_FOUND', message: 'no operation under this key' } } as const;

/** Who resolved, as recorded with the outcome: the issuer and subject the token proved, and the name it gave. */
const resolverOf = (operator: Operator): string =>
  canonicalJson({ issuer: operator.issuer, subject: operator.subject, name: operator.name });

/** What each request's operator may see: an idempotency record, and its stored outcome when there is one. */
interface Visible {
  readonly operator: Operator;
  readonly record: LedgerRecord;
  readonly stored: StoredOutcome | null;
}

/**
 * The operator routes' gate: `onRequest` proves each request's operator (the control API's own
 * hook lets these routes by), and `visible` finds an operation only in a tenant they hold.
 */
function operatorGate(options: OperatorApiOptions): {
  readonly onRequest: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>;
  readonly visible: (request: FastifyRequest, key: string) => Promise<Visible | undefined>;
} {
  // Each request's operator, as onRequest proved them.
  const operatorOf = new WeakMap<FastifyRequest, Operator>();
  const onRequest = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const check = await options.operators.authenticate(request.headers.authorization);
    if (!check.ok) {
      options.refused?.(check.code);
      if (check.challenge !== undefined) void reply.header('www-authenticate', check.challenge);
      return reply.code(check.status).send({ error: { code: check.code, message: check.message } });
    }
    operatorOf.set(request, check.operator);
    return undefined;
  };
  /** The record under `key` and its stored outcome, when it is one of a tenant the operator holds; else nothing (answered 404). */
  const visible = async (request: FastifyRequest, key: string): Promise<Visible | undefined> => {
    const operator = operatorOf.get(request);
    if (operator === undefined) throw new Error('an operator route was reached without an operator');
    const record = await options.idempotency.get(key);
    if (record === undefined) return undefined;
    const stored = record.outcome === null ? null : (JSON.parse(record.outcome) as StoredOutcome);
    const tenant = stored?.tenant ?? (await options.runs.get(runIdOf(key)))?.tenant;
    // Another tenant's operation does not exist for this operator: the answer is the one for no operation.
    if (tenant === undefined || !operator.tenants.includes(tenant)) {
      options.refused?.('OTHER_TENANT');
      return undefined;
    }
    return { operator, record, stored };
  };
  return { onRequest, visible };
}

/**
 * People settle what Gatehouse could not: an operator looks up a write whose outcome is unknown
 * and resolves it — succeeded (with the evidence and the result the system of record shows) or
 * failed — and the final result is published to the agent's command. An operator is a person the
 * identity provider proves, with the operator role, and sees only the operations of their tenants;
 * the resolution records who they are (issuer, subject, name), never a name the body gives.
 */
export function registerOperatorRoutes(app: FastifyInstance, options: OperatorApiOptions): void {
  const { onRequest, visible } = operatorGate(options);

  app.get<{ Params: { key: string } }>('/operations/:key', { config: OPERATOR_ROUTE, onRequest }, async (request, reply) => {
    const found = await visible(request, request.params.key);
    if (found === undefined) return reply.code(404).send(NOT_FOUND);
    const { record, stored } = found;
    return {
      key: request.params.key,
      state: record.state,
      arguments_sha256: record.arguments_sha256,
      created_at: new Date(record.created_at).toISOString(),
      updated_at: new Date(record.updated_at).toISOString(),
      command_id: stored?.command_id ?? null,
      run_id: stored?.run_id ?? null,
      tenant: stored?.tenant ?? null,
      tool: stored?.tool ?? null,
      status: stored?.status ?? null,
      error_code: stored?.error?.code ?? null,
    };
  });

  app.post<{ Params: { key: string }; Body: ResolveBody }>(
    '/operations/:key/resolve',
    { config: OPERATOR_ROUTE, onRequest, preValidation: refuseNamedResolver, schema: { body: resolveSchema } },
    async (request, reply) => {
      const { key } = request.params;
      const body = request.body;
      const found = await visible(request, key);
      if (found === undefined || found.stored === null) return reply.code(404).send(NOT_FOUND);
      const { operator, record } = found;
      const stored = found.stored;
      const final = finalResult(body, stored, record.arguments_sha256, options.catalog);
      if ('refusal' in final) return reply.code(422).send({ error: final.refusal });
      const resolvedBy = resolverOf(operator);
      let resolved: Resolution;
      try {
        resolved = await options.idempotency.resolveUnknown(key, {
          state: body.state,
          // With the headers the command's events carried: the same trace, and the asking instance's partition.
          outcome: toStoredOutcome(final.result, `operator:${resolvedBy}`, stored.headers),
          by: resolvedBy,
          // The same request by the same person is a retry of this resolution; by another, it is not.
          fingerprint: sha256Hex(canonicalJson({ key, body, by: { issuer: operator.issuer, subject: operator.subject } })),
        });
      } catch (error) {
        if (!(error instanceof ReplicationUnconfirmed)) throw error;
        return reply.code(503).send({ error: { code: 'STORE_UNCONFIRMED', message: error.message } });
      }
      if (resolved.kind !== 'resolved')
        return reply.code(409).send({ error: { code: 'OUTCOME_ALREADY_KNOWN', message: `the outcome is already ${record.state}` } });
      // The outcome stored by this resolution, or by the same resolution before, whose answer may
      // have gone out before it was marked published: then it is not published again.
      const answer = fromStoredOutcome(resolved.outcome, addressOf(stored), record.arguments_sha256);
      if ((await options.answers.published(answer.result.run_id, answer.result, answer.outcome.headers)) !== 'published')
        await options.publish(answer.result, answer.outcome.headers);
      await options.idempotency.resolutionPublished(key);
      request.log.info(
        {
          idempotency_key: key,
          command_id: stored.command_id,
          tenant: stored.tenant,
          state: body.state,
          resolved_by: { issuer: operator.issuer, subject: operator.subject },
        },
        'unknown outcome resolved by an operator',
      );
      const by = { issuer: operator.issuer, subject: operator.subject, name: operator.name };
      return { key, state: body.state, command_id: stored.command_id, resolved_by: by };
    },
  );
}

/** The run a write's key belongs to: keys are `<run id>:<proposal id>:commit`, and a run id may hold colons. */
const runIdOf = (key: string): string => key.split(':').slice(0, -2).join(':');

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
