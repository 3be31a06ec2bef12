import type { Catalog, ToolContract } from '@gatehouse/contracts';
import type { HostedPack } from '@gatehouse/runtime';
import type { CommandContext, CommandGroup } from '../command.js';
import { usageError } from '../exit-code.js';
import { formatDuration } from '../format.js';
import { hostedPack } from '../host-pack.js';
import { chosenDocuments, chosenPack, PACK_OPTION, ROLES_FILE_OPTION } from '../pack-choice.js';

const FORMATS = ['mcp', 'openai', 'snapshot'] as const;
type Format = (typeof FORMATS)[number];

type RoleTools = Readonly<Record<string, readonly string[]>>;

const packOptions = {
  pack: PACK_OPTION,
  role: { type: 'string', value: 'role', description: 'only the tools of this role (of the roles document in force)' },
  'roles-file': ROLES_FILE_OPTION,
} as const;

/** The pack the command line names, hosted: its catalog, and its roles (or the file replacing them) checked against it. */
function hostChosen({ options, io }: CommandContext): Promise<HostedPack> {
  return hostedPack(chosenPack(options, io.env), io.env, chosenDocuments(options, io.env));
}

/** Every role, or just the one asked for (an unknown role is a usage error naming the known ones). */
function selectedRoles(hosted: HostedPack, role: string | undefined): RoleTools {
  const roles: RoleTools = Object.fromEntries(Object.entries(hosted.roles).map(([name, r]) => [name, r.tools]));
  if (role === undefined) return roles;
  const tools = roles[role];
  if (tools === undefined) throw usageError(`no role "${role}"; roles: ${Object.keys(roles).sort().join(', ')}`);
  return { [role]: tools };
}

/** The tools in scope: all of the catalog, or the role's (of a roles file given on the command line: all its roles'). */
function toolsInScope(hosted: HostedPack, { options }: CommandContext): readonly ToolContract[] {
  if (options.string('role') === undefined && options.string('roles-file') === undefined) return hosted.catalog.tools();
  const addresses = new Set(Object.values(selectedRoles(hosted, options.string('role'))).flat());
  return hosted.catalog.tools().filter((tool) => addresses.has(tool.address));
}

function rateLimitOf(tool: ToolContract): string {
  const limit = tool.rateLimit;
  return limit === undefined ? '-' : `${limit.limit}/${formatDuration(limit.windowMs)} per ${limit.per}`;
}

async function exportText(format: Format, catalog: Catalog, tools: readonly ToolContract[], roles: () => RoleTools): Promise<string> {
  const { snapshotByRole, snapshotJson, toMcpTool, toOpenAiFunction } = await import('@gatehouse/contracts');
  // Agent runtimes get live versions only, as the control API grants runs.
  const live = tools.filter((tool) => tool.retired !== true);
  if (format === 'mcp') return `${JSON.stringify({ tools: live.map(toMcpTool) }, null, 2)}\n`;
  if (format === 'openai') return `${JSON.stringify({ tools: live.map(toOpenAiFunction) }, null, 2)}\n`;
  return snapshotJson(snapshotByRole(catalog, roles()));
}

export const catalog: CommandGroup = {
  name: 'catalog',
  summary: 'the catalog of a tool pack: contracts, and exports for agent runtimes and contract tests',
  subcommands: [
    {
      name: 'show',
      summary: 'every tool version: effect, retry class, approval rule, retired, rate limit',
      options: packOptions,
      notes: [
        'The pack is hosted as the services host it: its configuration read from the environment, its roles and policy table checked against its catalog.',
      ],
      async run(context) {
        const { out } = context;
        const hosted = await hostChosen(context);
        const tools = toolsInScope(hosted, context);
        const rows = tools.map((tool) => ({
          address: tool.address,
          effect: tool.effect,
          retry: tool.retry,
          approval: tool.approval ?? null,
          retired: tool.retired === true,
          rate_limit: tool.rateLimit ?? null,
          timeout_ms: tool.timeoutMs,
          live: hosted.catalog.liveAddress(tool.name),
        }));
        out.result(rows, () =>
          out.table(
            [
              { header: 'ADDRESS', cell: (t: ToolContract) => t.address },
              { header: 'EFFECT', cell: (t) => t.effect },
              { header: 'RETRY', cell: (t) => t.retry },
              { header: 'APPROVAL', cell: (t) => t.approval ?? '-' },
              { header: 'RETIRED', cell: (t) => (t.retired === true ? `yes → ${hosted.catalog.liveAddress(t.name) ?? 'none'}` : 'no') },
              { header: 'RATE LIMIT', cell: rateLimitOf },
            ],
            tools,
          ),
        );
      },
    },
    {
      name: 'export',
      summary: 'the catalog as MCP tools, OpenAI functions, or the per-role snapshot contract tests pin (always JSON)',
      options: {
        format: { type: 'string', value: 'mcp|openai|snapshot', required: true, description: 'what to export' },
        ...packOptions,
      },
      notes: [
        'mcp and openai print {"tools": [...]}: the live (non-retired) versions, of one role with --role.',
        'snapshot prints { role: [{tool, effect, approval, retired}] }, as gatehouse pack check --snapshot does (examples/customer-support/pack/catalog.snapshot.json for the reference pack).',
      ],
      async run(context) {
        const { options, out } = context;
        const format = options.required('format');
        if (!(FORMATS as readonly string[]).includes(format))
          throw usageError(`--format must be one of ${FORMATS.join(', ')}, got "${format}"`);
        const hosted = await hostChosen(context);
        const tools = toolsInScope(hosted, context);
        out.raw(await exportText(format as Format, hosted.catalog, tools, () => selectedRoles(hosted, options.string('role'))));
      },
    },
  ],
};
