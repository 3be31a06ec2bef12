import type { CommandGroup, OptionSpec, OptionSpecs, Subcommand } from './command.js';

/** Options every subcommand takes, before or after its name. */
export const GLOBAL_OPTIONS: OptionSpecs = {
  json: { type: 'boolean', description: 'print JSON for scripts instead of tables' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
};

const ENVIRONMENT: readonly (readonly [string, string])[] = [
  ['GATEHOUSE_CONTROL_URL', 'policy service control API (runs, operations); default http://127.0.0.1:8091'],
  ['GATEHOUSE_CONTROL_TOKEN', 'its bearer token (trusted callers only)'],
  ['GATEHOUSE_APPROVAL_URL', 'approval API (approvals); default http://127.0.0.1:8093'],
  ['GATEHOUSE_APPROVER_TOKEN', 'your approver bearer token (an IdP access token, e.g. from approvals sign-in): it says who decides'],
  ['GATEHOUSE_OIDC_ISSUER', 'the identity provider approvals sign-in and operations sign-in sign you in at'],
  ['GATEHOUSE_CLI_CLIENT_ID', 'the CLI’s public client there; default gatehouse-cli'],
  ['KAFKA_BROKERS', 'Kafka (dlq); default 127.0.0.1:9092'],
  ['GATEHOUSE_TOPIC_PREFIX', 'topic prefix of the deployment (dlq); default none'],
  ['GATEHOUSE_TOOL_PACK', 'tool pack (catalog, trace) when --pack is not given: a package name or a path, #<export> to pick one'],
  ['GATEHOUSE_ROLES_FILE', 'roles document replacing the pack’s own (catalog, trace, pack check); default the pack’s'],
  ['GATEHOUSE_POLICY_TABLE_FILE', 'policy table replacing the pack’s own (catalog, trace, pack check); default the pack’s'],
  ['GATEHOUSE_POLICY_KEYS', 'the policy service’s public keys (trace record keeps only what the right service signed)'],
  ['GATEHOUSE_APPROVAL_KEYS', 'the approval service’s public keys (trace record)'],
  ['GATEHOUSE_EXECUTOR_KEYS', 'the executors’ public keys (trace record)'],
  ['GATEHOUSE_ASSERTION_KEYS', 'the executors’ call-assertion public keys (keys jwks)'],
  ['GATEHOUSE_OPERATOR_TOKEN', 'your operator access token (operations; e.g. from operations sign-in): it says who resolves'],
  ['GATEHOUSE_CLI_TIMEOUT_MS', 'HTTP timeout; default 10000'],
  ['GATEHOUSE_DLQ_READ_TIMEOUT_MS', 'bound on reading a DLQ; default 60000'],
];

const EXIT_CODES = 'Exit codes: 0 ok · 1 refused or failed (401, 403, 404, 409, 422…) · 2 usage error · 3 service or stack unreachable';

function optionUsage(name: string, spec: OptionSpec): string {
  const flag = `--${name}${spec.type === 'string' ? ` <${spec.value ?? 'value'}>` : ''}`;
  return spec.short === undefined ? flag : `-${spec.short}, ${flag}`;
}

function synopsis(group: CommandGroup, sub: Subcommand): string {
  const positionals = (sub.positionals ?? []).map((name) => `<${name}>`);
  const options = Object.entries(sub.options ?? {}).map(([name, spec]) => {
    const usage = `--${name}${spec.type === 'string' ? ` <${spec.value ?? 'value'}>` : ''}`;
    const repeated = spec.multiple === true ? '...' : '';
    return spec.required === true ? `${usage}${repeated}` : `[${usage}]${repeated}`;
  });
  return ['gatehouse', group.name, sub.name, ...positionals, ...options, '[--json]'].join(' ');
}

/** Two aligned columns, indented: a term and what it means. */
function aligned(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...pairs.map(([term]) => term.length));
  return pairs.map(([term, meaning]) => `  ${term.padEnd(width)}  ${meaning}\n`).join('');
}

function optionLines(options: OptionSpecs): string {
  return aligned(
    Object.entries(options).map(
      ([name, spec]) => [optionUsage(name, spec), `${spec.description}${spec.multiple === true ? ' (repeatable)' : ''}`] as const,
    ),
  );
}

export function topHelp(groups: readonly CommandGroup[]): string {
  const commands = aligned(groups.map((g) => [`${g.name} ${g.subcommands.map((s) => s.name).join('|')}`, g.summary] as const));
  return [
    'gatehouse — operate a Gatehouse: agent runs, approvals, unknown outcomes, dead letters, the tool catalog; check and start tool packs',
    '',
    'Usage: gatehouse <command> <subcommand> [arguments] [options]',
    '       gatehouse <command> [<subcommand>] --help',
    '',
    'Commands:',
    commands,
    'Options:',
    optionLines(GLOBAL_OPTIONS),
    'Environment:',
    aligned(ENVIRONMENT),
    EXIT_CODES,
    '',
  ].join('\n');
}

export function groupHelp(group: CommandGroup): string {
  const lines = group.subcommands.map((sub) => `  ${synopsis(group, sub)}\n      ${sub.summary}`);
  return [`gatehouse ${group.name} — ${group.summary}`, '', 'Usage:', ...lines, '', EXIT_CODES, ''].join('\n');
}

export function subcommandHelp(group: CommandGroup, sub: Subcommand): string {
  return [
    `gatehouse ${group.name} ${sub.name} — ${sub.summary}`,
    '',
    `Usage: ${synopsis(group, sub)}`,
    '',
    'Options:',
    optionLines({ ...(sub.options ?? {}), ...GLOBAL_OPTIONS }),
    ...(sub.notes ?? []),
    ...(sub.notes === undefined ? [] : ['']),
    EXIT_CODES,
    '',
  ].join('\n');
}
