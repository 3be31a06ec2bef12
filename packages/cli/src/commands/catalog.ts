import { existsSync } from 'node:fs';
import type { Catalog, ToolContract } from '@gatehouse/contracts';
import type { CommandGroup, Options } from '../command.js';
import { CliError, ExitCode, usageError } from '../exit-code.js';
import { formatDuration } from '../format.js';
import type { Env } from '../io.js';
import { chosenFile, DEFAULT_ROLES_FILE } from '../repository-files.js';

const FORMATS = ['mcp', 'openai', 'snapshot'] as const;
type Format = (typeof FORMATS)[number];

type RoleTools = Readonly<Record<string, readonly string[]>>;

const roleOptions = {
  role: { type: 'string', value: 'role', description: 'only the tools of this role (config/roles.json)' },
  'roles-file': { type: 'string', value: 'path', description: 'roles document (default: GATEHOUSE_ROLES_FILE, else config/roles.json)' },
} as const;

/** The roles document, checked against the catalog by the parser the policy service uses at start-up. */
async function loadRoleTools(catalog: Catalog, options: Options, env: Env): Promise<RoleTools> {
  // Loaded on demand: only these commands need the roles parser (and its Ajv schema).
  const { loadRoles } = await import('@gatehouse/governance');
  const file = chosenFile(options, 'roles-file', env, 'GATEHOUSE_ROLES_FILE', DEFAULT_ROLES_FILE);
  if (!existsSync(file)) throw usageError(`no roles file at ${file}`);
  try {
    const roles = loadRoles(file, catalog);
    return Object.fromEntries(Object.entries(roles).map(([name, role]) => [name, role.tools]));
  } catch (cause) {
    throw new CliError(ExitCode.refused, 'ROLES_INVALID', `${file}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** Every role, or just the one asked for (an unknown role is a usage error naming the known ones). */
async function selectedRoles(catalog: Catalog, options: Options, env: Env): Promise<RoleTools> {
  const roles = await loadRoleTools(catalog, options, env);
  const role = options.string('role');
  if (role === undefined) return roles;
  const tools = roles[role];
  if (tools === undefined) throw usageError(`no role "${role}"; roles: ${Object.keys(roles).sort().join(', ')}`);
  return { [role]: tools };
}

/** The tools in scope: all of the catalog, or the role's. */
async function toolsInScope(catalog: Catalog, options: Options, env: Env): Promise<readonly ToolContract[]> {
  if (options.string('role') === undefined && options.string('roles-file') === undefined) return catalog.tools();
  const addresses = new Set(Object.values(await selectedRoles(catalog, options, env)).flat());
  return catalog.tools().filter((tool) => addresses.has(tool.address));
}

function rateLimitOf(tool: ToolContract): string {
  const limit = tool.rateLimit;
  return limit === undefined ? '-' : `${limit.limit}/${formatDuration(limit.windowMs)} per ${limit.per}`;
}

/** The reference catalog, compiled on demand: loading contracts and Ajv is the slow part of start-up. */
async function loadReferenceCatalog(): Promise<Catalog> {
  const { referenceCatalog } = await import('@gatehouse/reference-tools');
  return referenceCatalog();
}

async function exportText(format: Format, catalog: Catalog, tools: readonly ToolContract[], roles: () => Promise<RoleTools>): Promise<string> {
  const { snapshotByRole, snapshotJson, toMcpTool, toOpenAiFunction } = await import('@gatehouse/contracts');
  // Agent runtimes get live versions only, as the control API grants runs.
  const live = tools.filter((tool) => tool.retired !== true);
  if (format === 'mcp') return `${JSON.stringify({ tools: live.map(toMcpTool) }, null, 2)}\n`;
  if (format === 'openai') return `${JSON.stringify({ tools: live.map(toOpenAiFunction) }, null, 2)}\n`;
  return snapshotJson(snapshotByRole(catalog, await roles()));
}

export const catalog: CommandGroup = {
  name: 'catalog',
  summary: 'the reference tool catalog: contracts, and exports for agent runtimes and contract tests',
  subcommands: [
    {
      name: 'show',
      summary: 'every tool version: effect, retry class, approval rule, retired, rate limit',
      options: roleOptions,
      async run({ options, out, io }) {
        const reference = await loadReferenceCatalog();
        const tools = await toolsInScope(reference, options, io.env);
        const rows = tools.map((tool) => ({
          address: tool.address,
          effect: tool.effect,
          retry: tool.retry,
          approval: tool.approval ?? null,
          retired: tool.retired === true,
          rate_limit: tool.rateLimit ?? null,
          timeout_ms: tool.timeoutMs,
          live: reference.liveAddress(tool.name),
        }));
        out.result(rows, () =>
          out.table(
            [
              { header: 'ADDRESS', cell: (t: ToolContract) => t.address },
              { header: 'EFFECT', cell: (t) => t.effect },
              { header: 'RETRY', cell: (t) => t.retry },
              { header: 'APPROVAL', cell: (t) => t.approval ?? '-' },
              { header: 'RETIRED', cell: (t) => (t.retired === true ? `yes → ${reference.liveAddress(t.name) ?? 'none'}` : 'no') },
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
        ...roleOptions,
      },
      notes: [
        'mcp and openai print {"tools": [...]}: the live (non-retired) versions, of one role with --role.',
        'snapshot prints { role: [{tool, effect, approval, retired}] } exactly as packages/reference-tools/catalog.snapshot.json.',
      ],
      async run({ options, out, io }) {
        const format = options.required('format');
        if (!(FORMATS as readonly string[]).includes(format)) throw usageError(`--format must be one of ${FORMATS.join(', ')}, got "${format}"`);
        const reference = await loadReferenceCatalog();
        const tools = await toolsInScope(reference, options, io.env);
        out.raw(await exportText(format as Format, reference, tools, () => selectedRoles(reference, options, io.env)));
      },
    },
  ],
};
