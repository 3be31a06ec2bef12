import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { PACK_NAME_PATTERN } from '@gatehouse/sdk';
import {
  GET_TICKET_SOURCE,
  indexSource,
  PRIORITY_CHANGE_SOURCE,
  TICKET_SCHEMA_SOURCE,
  TICKET_STORE_SOURCE,
} from './pack-scaffold-sources.js';

/** One file of a new pack: its path inside the pack's directory, and its text. */
export interface ScaffoldFile {
  readonly path: string;
  readonly text: string;
}

/** The pack name a directory suggests (`./Billing Tools` → `billing-tools`); undefined when it suggests none. */
export function packNameOf(dir: string): string | undefined {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[^a-z]+|-+$/g, '');
  return PACK_NAME_PATTERN.test(name) ? name : undefined;
}

/** The pack's export: `billing-tools` → `billingToolsPack`. */
function exportNameOf(name: string): string {
  const camel = name.replace(/-([a-z0-9])/g, (_match, c: string) => c.toUpperCase());
  return camel.endsWith('Pack') ? camel : `${camel}Pack`;
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/**
 * Where the documents of a pack in `dir` find the SDK's published JSON Schemas, relative to its
 * `config/`: in the nearest `node_modules` that holds `@gatehouse/sdk` (a workspace's root), else
 * in the pack's own, where installing the SDK's tarball puts it. Editors validate a document by it.
 */
export function schemaDirFor(dir: string): string {
  for (let at = resolve(dir); ; at = dirname(at)) {
    const schemas = join(at, 'node_modules', '@gatehouse', 'sdk', 'schemas');
    if (existsSync(schemas))
      return relative(join(resolve(dir), 'config'), schemas)
        .split(sep)
        .join('/');
    if (dirname(at) === at) return '../node_modules/@gatehouse/sdk/schemas';
  }
}

function manifest(name: string, sdkVersion: string): unknown {
  return {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    description: 'A Gatehouse tool pack: versioned tool contracts with their handlers, roles and policy table.',
    // Plain ES modules, no build step: the entry is the source. With TypeScript, point it at ./dist/index.js.
    exports: { '.': './src/index.js' },
    files: ['src', 'config'],
    dependencies: { '@gatehouse/sdk': sdkVersion },
  };
}

const ROLES = {
  roles: {
    'ticket-reader': {
      description: 'Looks tickets up; changes nothing.',
      readOnly: true,
      tools: ['get_ticket.v1'],
    },
    'ticket-agent': {
      description: 'Reads tickets and proposes priority changes, which a person approves.',
      readOnly: false,
      tools: ['get_ticket.v1', 'preview_ticket_priority_change.v1', 'commit_ticket_priority_change.v1'],
    },
  },
};

const POLICY_TABLE = {
  rules: [
    {
      id: 'ticket-priority-change-lead',
      description: 'A priority change is approved by a team lead.',
      match: { effect: 'write', approvalRules: ['ticket-priority-change'] },
      decision: { kind: 'require_approval', approverRole: 'team-lead', ttlMs: 3_600_000 },
    },
  ],
};

/**
 * Who approves when people sign in at the identity provider (the local stack's realm gives `groups`
 * and `tenant`): its `lead@acme.example`, of group `support-leads`, is a team lead of acme.
 */
const APPROVER_POLICY = {
  $comment:
    "Who may approve, from the person's claims at the identity provider. A person whose claims map to no approver role, or to no tenant, cannot sign in to approve.",
  grants: [
    { claim: 'groups', value: 'support-leads', roles: ['team-lead'] },
    { claim: 'tenant', value: 'acme', tenants: ['acme'] },
  ],
};

/** A demo approver for the pack's team-lead role: only the token's SHA-256 is written to the file. */
function approvers(demo: DemoApprover): object {
  return {
    $comment:
      'Approvers of the approval service when it hosts this pack. Only the SHA-256 of each bearer token is stored. Entries marked demo are for local use only.',
    approvers: [
      {
        identity: demo.identity,
        token_sha256: createHash('sha256').update(demo.token).digest('hex'),
        roles: ['team-lead'],
        tenants: ['acme'],
        demo: true,
        note: 'DEMO approver made by gatehouse pack init; its token is in README.md. Remove before any real use.',
      },
    ],
  };
}

/** The demo approver `pack init` makes: its identity, and its bearer token (shown once, in the README). */
export interface DemoApprover {
  readonly identity: string;
  readonly token: string;
}

function readme(name: string, exportName: string, demo: DemoApprover): string {
  return `# ${name}

A Gatehouse tool pack, made by \`gatehouse pack init\`. It holds one read tool (\`get_ticket.v1\`) and
one preview/commit pair that needs approval (\`preview_ticket_priority_change.v1\` →
\`commit_ticket_priority_change.v1\`), over an in-memory stand-in for a system of record.

| file | what it is |
|---|---|
| \`src/index.js\` | the pack (\`${exportName}\`): its variables, documents, \`setup\` and \`tools\` |
| \`src/get-ticket.js\` | the read tool: contract and handler |
| \`src/priority-change.js\` | the preview/commit pair: one proposal schema, the preview proposes, the commit runs what was approved |
| \`src/ticket-schema.js\` | schema fragments the tools share (every object closed) |
| \`src/ticket-store.js\` | the in-memory stand-in: replace it with a client of your system of record |
| \`config/roles.json\` | which tools each role's runs get |
| \`config/policy-table.json\` | who approves which write |
| \`config/approvers.json\` | who may approve in the approval console: one **demo** approver |
| \`config/approver-policy.json\` | who may approve when people sign in at your identity provider: claims → approver roles and tenants |

**Demo approver** (local use only; remove it before any real use): \`${demo.identity}\`, role
\`team-lead\`, tenant \`acme\`, bearer token \`${demo.token}\`. The approvers file keeps only its SHA-256.

The sources are plain ES modules with JSDoc types and \`// @ts-check\`: no build step, and an editor
checks them against the types of \`@gatehouse/sdk\`.

## Next steps

1. Install its one dependency, \`@gatehouse/sdk\`, where the pack lives. Inside a clone of Gatehouse
   it resolves from the workspace already. In a repository of its own, install the SDK's tarball
   (\`npm run pack:sdk\` in the clone makes it): \`npm install /path/to/gatehouse-sdk-<version>.tgz\`;
   a plain \`npm install\` asks the registry for \`@gatehouse/sdk\`, which is not published there.
2. Run its contract checks — no server needed — with the clone's \`gatehouse\` (from the clone,
   \`npx gatehouse\`; from anywhere, \`node /path/to/gatehouse/packages/cli/bin/gatehouse.mjs\`), and
   pin the per-role snapshot:

   \`\`\`sh
   gatehouse pack check .
   gatehouse pack check . --snapshot > catalog.snapshot.json
   gatehouse pack check . --snapshot-file catalog.snapshot.json   # in CI: exit 1 names each difference
   \`\`\`
3. Make the tools yours: rename them, write their schemas (closed objects; a write is a
   preview/commit pair with an \`approval\` rule), and build a client of your system of record in
   \`setup\` from the pack's own variables (\`config\`). Handlers never read \`process.env\`.
4. Give the roles and the policy table your tools, approval rules and approver roles.
5. Host it: set \`GATEHOUSE_TOOL_PACK\` to this package's name or directory for the Gatehouse
   services, and look at what they would serve with \`gatehouse catalog show --pack .\`.

To write it in TypeScript instead: move \`src/*.js\` to \`src/*.ts\`, add a \`tsconfig.json\` that
emits to \`dist/\`, and point \`exports\` at \`./dist/index.js\`.
`;
}

/** Every file of a new pack named `name`, which `gatehouse pack check` passes as it is. */
export function packScaffold(options: {
  readonly name: string;
  readonly sdkVersion: string;
  readonly demoApprover: DemoApprover;
  /** Where `config/` finds the SDK's JSON Schemas (schemaDirFor). */
  readonly schemaDir: string;
}): readonly ScaffoldFile[] {
  const exportName = exportNameOf(options.name);
  // Each document names its JSON Schema first, so an editor checks it as it is written.
  const document = (schema: string, body: object): string => json({ $schema: `${options.schemaDir}/${schema}`, ...body });
  return [
    { path: 'package.json', text: json(manifest(options.name, options.sdkVersion)) },
    { path: 'README.md', text: readme(options.name, exportName, options.demoApprover) },
    { path: 'config/roles.json', text: document('roles.schema.json', ROLES) },
    { path: 'config/policy-table.json', text: document('policy-table.schema.json', POLICY_TABLE) },
    { path: 'config/approvers.json', text: document('approvers.schema.json', approvers(options.demoApprover)) },
    { path: 'config/approver-policy.json', text: document('approver-policy.schema.json', APPROVER_POLICY) },
    { path: 'src/index.js', text: indexSource(options.name, exportName) },
    { path: 'src/get-ticket.js', text: GET_TICKET_SOURCE },
    { path: 'src/priority-change.js', text: PRIORITY_CHANGE_SOURCE },
    { path: 'src/ticket-schema.js', text: TICKET_SCHEMA_SOURCE },
    { path: 'src/ticket-store.js', text: TICKET_STORE_SOURCE },
  ];
}
