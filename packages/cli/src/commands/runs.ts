import type { CommandGroup } from '../command.js';
import { usageError } from '../exit-code.js';
import { isoTime, parseDuration, relativeTime } from '../format.js';
import { HttpApi, segment } from '../http-api.js';
import { controlApi } from '../settings.js';

/** A run as the control API answers it. */
interface RunView {
  readonly run_id: string;
  readonly tenant: string;
  readonly principal: string;
  readonly role: string;
  readonly capabilities: readonly string[];
  readonly environment: string;
  readonly created_at: number;
  readonly expires_at: number;
  readonly stopped_at: number | null;
  /** Present once, in the answer to a registration that asked for it. */
  readonly mcp_token?: string;
  /** Present once, in the answer to a registration: the key the run's commands are proved with. */
  readonly run_key?: string;
}

const ENVIRONMENTS = ['sandbox', 'staging', 'production'] as const;
const TOOL_FORMATS = ['mcp', 'openai'] as const;
const DEFAULT_TTL = '1h';

function stateOf(run: RunView, now: number): string {
  if (run.stopped_at !== null) return 'stopped';
  return run.expires_at > now ? 'active' : 'expired';
}

function runFields(run: RunView, now: number): (readonly [string, string])[] {
  return [
    ['run', run.run_id],
    ['state', stateOf(run, now)],
    ['tenant', run.tenant],
    ['principal', run.principal],
    ['role', run.role],
    ['environment', run.environment],
    ['created', isoTime(run.created_at)],
    ['expires', `${isoTime(run.expires_at)} (${relativeTime(run.expires_at, now)})`],
    ...(run.stopped_at === null ? [] : [['stopped', isoTime(run.stopped_at)] as const]),
    ['capabilities', run.capabilities.join(', ') || '(none)'],
  ];
}

export const runs: CommandGroup = {
  name: 'runs',
  summary: 'register, list, inspect and stop agent runs (control API)',
  subcommands: [
    {
      name: 'create',
      summary: 'register a run: who the agent acts for, in which role and environment, until when',
      options: {
        tenant: { type: 'string', value: 'tenant', required: true, description: 'tenant the run belongs to' },
        principal: { type: 'string', value: 'who', required: true, description: 'the person or system the agent acts for' },
        role: {
          type: 'string',
          value: 'role',
          required: true,
          description: 'a role of the deployment’s roles document (e.g. support-agent)',
        },
        environment: { type: 'string', value: 'env', required: true, description: `one of ${ENVIRONMENTS.join(', ')}` },
        ttl: { type: 'string', value: 'duration', description: `how long the run lives: 900000, 90s, 15m, 2h (default ${DEFAULT_TTL})` },
        capability: {
          type: 'string',
          multiple: true,
          value: 'tool.vN',
          description: 'narrow the run to these tools; default: the role’s live tools',
        },
        'run-id': { type: 'string', value: 'id', description: 'choose the run id (default: generated)' },
        'mcp-token': { type: 'boolean', description: "also issue the run's MCP bearer token (shown once; stopping the run revokes it)" },
      },
      notes: [
        'Example: gatehouse runs create --tenant acme --principal agent:support-bot --role support-agent --environment sandbox --ttl 15m',
        'With --mcp-token the answer carries the token an MCP client sends as `Authorization: Bearer <token>` (docs/mcp.md).',
        "The answer carries the run's key once (`run key`): the agent runtime proves every command of the run with it (`runKey` of the client; GATEHOUSE_RUN_KEY of a stdio front door). Only its public half is kept.",
      ],
      async run({ options, out, io }) {
        const environment = options.required('environment');
        if (!(ENVIRONMENTS as readonly string[]).includes(environment))
          throw usageError(`--environment must be one of ${ENVIRONMENTS.join(', ')}, got "${environment}"`);
        const capabilities = options.list('capability');
        const runId = options.string('run-id');
        const body = {
          tenant: options.required('tenant'),
          principal: options.required('principal'),
          role: options.required('role'),
          environment,
          ttl_ms: parseDuration(options.string('ttl') ?? DEFAULT_TTL, '--ttl'),
          ...(capabilities.length === 0 ? {} : { capabilities }),
          ...(runId === undefined ? {} : { run_id: runId }),
          ...(options.flag('mcp-token') ? { mcp_token: true } : {}),
        };
        const run = await new HttpApi(controlApi(io.env)).post<RunView>('/runs', body);
        out.result(run, () =>
          out.fields([
            ...runFields(run, io.now()),
            ...(run.run_key === undefined ? [] : [['run key', run.run_key] as const]),
            ...(run.mcp_token === undefined ? [] : [['mcp token', run.mcp_token] as const]),
          ]),
        );
      },
    },
    {
      name: 'list',
      summary: 'the runs of a tenant',
      options: { tenant: { type: 'string', value: 'tenant', required: true, description: 'whose runs' } },
      async run({ options, out, io }) {
        const answer = await new HttpApi(controlApi(io.env)).get<{ runs: RunView[] }>('/runs', { tenant: options.required('tenant') });
        const now = io.now();
        const sorted = [...answer.runs].sort((a, b) => b.created_at - a.created_at);
        out.result(sorted, () =>
          out.table(
            [
              { header: 'RUN', cell: (r: RunView) => r.run_id },
              { header: 'STATE', cell: (r) => stateOf(r, now) },
              { header: 'ROLE', cell: (r) => r.role },
              { header: 'PRINCIPAL', cell: (r) => r.principal, max: 40 },
              { header: 'ENV', cell: (r) => r.environment },
              { header: 'TOOLS', cell: (r) => String(r.capabilities.length), right: true },
              { header: 'CREATED', cell: (r) => relativeTime(r.created_at, now) },
              { header: 'EXPIRES', cell: (r) => relativeTime(r.expires_at, now) },
            ],
            sorted,
          ),
        );
      },
    },
    {
      name: 'show',
      summary: 'one run and its capabilities',
      positionals: ['run_id'],
      async run({ arg, out, io }) {
        const run = await new HttpApi(controlApi(io.env)).get<RunView & { active: boolean }>(`/runs/${segment(arg('run_id'))}`);
        out.result(run, () => out.fields(runFields(run, io.now())));
      },
    },
    {
      name: 'stop',
      summary: 'stop a run now: its later commands are refused',
      positionals: ['run_id'],
      async run({ arg, out, io }) {
        const answer = await new HttpApi(controlApi(io.env)).post<{ run_id: string; outcome: string }>(
          `/runs/${segment(arg('run_id'))}/stop`,
        );
        out.result(answer, () => `${answer.run_id}: ${answer.outcome}\n`);
      },
    },
    {
      name: 'tools',
      summary: 'the tool definitions an active run’s runtime gets (always JSON)',
      positionals: ['run_id'],
      options: { format: { type: 'string', value: 'mcp|openai', description: 'definition format (default mcp)' } },
      async run({ arg, options, out, io }) {
        const format = options.string('format') ?? 'mcp';
        if (!(TOOL_FORMATS as readonly string[]).includes(format))
          throw usageError(`--format must be one of ${TOOL_FORMATS.join(', ')}, got "${format}"`);
        const answer = await new HttpApi(controlApi(io.env)).get<unknown>(`/runs/${segment(arg('run_id'))}/tools`, { format });
        out.raw(`${JSON.stringify(answer, null, 2)}\n`);
      },
    },
  ],
};
