import { readFileSync } from 'node:fs';
import type { CommandGroup } from '../command.js';
import { signInSubcommand } from '../device-sign-in.js';
import { usageError } from '../exit-code.js';
import { HttpApi, segment } from '../http-api.js';
import { operatorApi } from '../settings.js';

/** An idempotency record as the operator API answers it (services/policy/src/operator-api.ts). */
interface OperationView {
  readonly key: string;
  readonly state: string;
  readonly arguments_sha256: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly command_id: string | null;
  readonly run_id: string | null;
  readonly tenant: string | null;
  readonly tool: string | null;
  readonly status: string | null;
  readonly error_code: string | null;
}

/** A resolution as the operator API answers it: who resolved is who the token proved. */
interface ResolveAnswer {
  readonly key: string;
  readonly state: string;
  readonly command_id: string;
  readonly resolved_by: { readonly issuer: string; readonly subject: string; readonly name: string | null };
}

const RESOLUTIONS = ['succeeded', 'failed'] as const;

/** `--result '{"…"}'` or `--result @file.json`: the result the system of record shows. */
function resultObject(text: string): Record<string, unknown> {
  let source = text;
  if (text.startsWith('@')) {
    try {
      source = readFileSync(text.slice(1), 'utf8');
    } catch (error) {
      throw usageError(`--result ${text}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch {
    throw usageError('--result must be a JSON object (or @file holding one)');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw usageError('--result must be a JSON object');
  return value as Record<string, unknown>;
}

export const operations: CommandGroup = {
  name: 'operations',
  summary:
    'look up and settle writes by idempotency key, e.g. outcomes left unknown (control API, as the operator of GATEHOUSE_OPERATOR_TOKEN)',
  subcommands: [
    signInSubcommand('GATEHOUSE_OPERATOR_TOKEN', 'operations', 'operator', [
      'The control API takes it when your claims give you the operator role (POLICY_OPERATOR_ROLE, default ops-admin), for your tenants.',
    ]),
    {
      name: 'show',
      summary: 'the idempotency record of a write: state (in_flight, succeeded, failed, unknown), command, tool',
      positionals: ['key'],
      notes: [
        'A commit’s key is <run_id>:<proposal_id>:commit; unknown outcomes are also announced on gatehouse.operator.',
        'An operation of a tenant you do not hold answers 404, as one that does not exist.',
      ],
      async run({ arg, out, io }) {
        const op = await new HttpApi(operatorApi(io.env)).get<OperationView>(`/operations/${segment(arg('key'))}`);
        out.result(op, () =>
          out.fields([
            ['key', op.key],
            ['state', op.state],
            ['tool', op.tool ?? '-'],
            ['tenant', op.tenant ?? '-'],
            ['run', op.run_id ?? '-'],
            ['command', op.command_id ?? '-'],
            ['status', op.status ?? '-'],
            ['error code', op.error_code ?? '-'],
            ['arguments sha256', op.arguments_sha256],
            ['created', op.created_at],
            ['updated', op.updated_at],
          ]),
        );
      },
    },
    {
      name: 'resolve',
      summary: 'settle an unknown outcome with evidence; the final result is published to the agent',
      positionals: ['key'],
      options: {
        state: { type: 'string', value: 'succeeded|failed', required: true, description: 'what the system of record shows happened' },
        evidence: { type: 'string', value: 'text', required: true, description: 'how you know (ticket, query, log line)' },
        result: {
          type: 'string',
          value: 'json|@file',
          description: 'succeeded: the result the system of record shows (validated against the tool’s output schema)',
        },
        'error-code': { type: 'string', value: 'CODE', description: 'failed: an error code of the catalogue (default UPSTREAM_ERROR)' },
        'error-message': { type: 'string', value: 'text', description: 'failed: what went wrong, for the agent' },
      },
      notes: [
        'Only an outcome in state unknown can be resolved; anything else answers 409 (exit 1).',
        'The resolution is recorded under who GATEHOUSE_OPERATOR_TOKEN proves you are (issuer and subject at the IdP).',
      ],
      async run({ arg, options, out, io }) {
        const state = options.required('state');
        if (!(RESOLUTIONS as readonly string[]).includes(state))
          throw usageError(`--state must be one of ${RESOLUTIONS.join(', ')}, got "${state}"`);
        const result = options.string('result');
        const errorCode = options.string('error-code');
        const errorMessage = options.string('error-message');
        if (state === 'succeeded' && result === undefined)
          throw usageError('--state succeeded needs --result: the result the system of record shows');
        if (state === 'succeeded' && (errorCode !== undefined || errorMessage !== undefined))
          throw usageError('--error-code/--error-message go with --state failed');
        if (state === 'failed' && result !== undefined) throw usageError('--result goes with --state succeeded');
        if ((errorCode === undefined) !== (errorMessage === undefined)) throw usageError('give --error-code and --error-message together');
        const body = {
          state,
          evidence: options.required('evidence'),
          ...(result === undefined ? {} : { result: resultObject(result) }),
          ...(errorCode === undefined || errorMessage === undefined ? {} : { error: { code: errorCode, message: errorMessage } }),
        };
        const answer = await new HttpApi(operatorApi(io.env)).post<ResolveAnswer>(`/operations/${segment(arg('key'))}/resolve`, body);
        const by = answer.resolved_by;
        out.result(
          answer,
          () =>
            `${answer.key}: resolved as ${answer.state} by ${by.name ?? by.subject} (${by.subject} at ${by.issuer}); the result of command ${answer.command_id} was published\n`,
        );
      },
    },
  ],
};
