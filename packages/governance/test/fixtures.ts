// A small catalog, policy table and in-memory ports for the governance tests: a read with a
// retired version, a preview/commit pair, a rate-limited write and an external write.
import { Catalog, defineTool } from '@gatehouse/contracts';
import type { JSONSchema, ToolContract } from '@gatehouse/contracts';
import { PolicyTable } from '@gatehouse/governance';
import type { BoundaryDeps, BoundaryRun, Proposal, RateTake } from '@gatehouse/governance';

/** A closed object schema (the catalog lints open ones). */
const closed = <const P extends Readonly<Record<string, JSONSchema>>, const R extends readonly (keyof P & string)[]>(
  properties: P,
  required: R,
) => ({ type: 'object', additionalProperties: false, required, properties }) as const;

const accountInput = closed({ account_id: { type: 'string', minLength: 1 } }, ['account_id']);
const accountView = closed({ account_id: { type: 'string' } }, ['account_id']);

const lookupV1 = defineTool({
  name: 'lookup_account',
  version: 1,
  description: 'Read an account (retired).',
  input: accountInput,
  output: accountView,
  effect: 'read',
  retry: 'safe',
  timeoutMs: 1000,
  cancel: 'none',
  maxResultBytes: 1024,
  retired: true,
});
export const lookupV2 = defineTool({
  name: 'lookup_account',
  version: 2,
  description: 'Read an account.',
  input: accountInput,
  output: accountView,
  effect: 'read',
  retry: 'safe',
  timeoutMs: 1000,
  cancel: 'none',
  maxResultBytes: 1024,
});
const previewTransfer = defineTool({
  name: 'preview_transfer',
  version: 1,
  description: 'Compute a transfer proposal.',
  input: accountInput,
  output: closed({ proposal_id: { type: 'string' }, expires_at: { type: 'string' }, effect: { type: 'string' } }, [
    'proposal_id',
    'expires_at',
    'effect',
  ]),
  effect: 'read',
  retry: 'safe',
  timeoutMs: 1000,
  cancel: 'none',
  maxResultBytes: 1024,
  commits: 'commit_transfer.v1',
});
export const commitTransfer = defineTool({
  name: 'commit_transfer',
  version: 1,
  description: 'Run a transfer proposal.',
  input: closed({ proposal_id: { type: 'string' } }, ['proposal_id']),
  output: closed({ transfer_id: { type: 'string' } }, ['transfer_id']),
  effect: 'write',
  retry: 'idempotent',
  approval: 'transfer',
  timeoutMs: 1000,
  cancel: 'none',
  maxResultBytes: 1024,
  previewedBy: 'preview_transfer.v1',
});
export const startExport = defineTool({
  name: 'start_export',
  version: 1,
  description: 'Export an account.',
  input: accountInput,
  output: closed({ operation_id: { type: 'string' } }, ['operation_id']),
  effect: 'write',
  retry: 'idempotent',
  approval: 'export',
  timeoutMs: 1000,
  cancel: 'none',
  maxResultBytes: 1024,
  rateLimit: { limit: 2, windowMs: 60_000, per: 'tenant' },
});
export const sendNotice = defineTool({
  name: 'send_notice',
  version: 1,
  description: 'Email the account holder.',
  input: closed({ account_id: { type: 'string' }, text: { type: 'string' } }, ['account_id', 'text']),
  output: closed({ message_id: { type: 'string' } }, ['message_id']),
  effect: 'write',
  retry: 'idempotent',
  approval: 'notice',
  timeoutMs: 1000,
  cancel: 'none',
  maxResultBytes: 1024,
  external: true,
});

export const tools: readonly ToolContract[] = [lookupV1, lookupV2, previewTransfer, commitTransfer, startExport, sendNotice];
export const catalog = Catalog.load(tools);

export const TABLE_DOCUMENT = {
  rules: [
    {
      id: 'production-destructive-deny',
      description: 'Destructive writes never run in production.',
      match: { effect: 'write', environments: ['production'], destructive: true },
      decision: { kind: 'deny', reason: 'Not in production' },
    },
    {
      id: 'bulk-ops',
      description: 'More than 100 records needs ops.',
      match: { effect: 'write', affectedRecordsOver: 100 },
      decision: { kind: 'require_approval', approverRole: 'ops', ttlMs: 3_600_000 },
    },
    {
      id: 'money-ops',
      description: 'More than 1,000.00 EUR (or any amount in another currency) needs ops.',
      match: { effect: 'write', amountOver: [{ minor: 100_000, currency: 'EUR' }] },
      decision: { kind: 'require_approval', approverRole: 'ops', ttlMs: 3_600_000 },
    },
    {
      id: 'notice-deny',
      description: 'Notices reach people outside the tenant: not from agents.',
      match: { effect: 'write', tools: ['send_notice.v1'] },
      decision: { kind: 'deny', reason: 'Notices are sent by people', next: 'a person' },
    },
    {
      id: 'transfer-lead',
      description: 'A lead approves a transfer.',
      match: { effect: 'write', approvalRules: ['transfer'] },
      decision: { kind: 'require_approval', approverRole: 'lead', ttlMs: 600_000 },
    },
    { id: 'export-allow', description: 'Exports run without a person.', match: { approvalRules: ['export'] }, decision: { kind: 'allow' } },
  ],
};

export const table = PolicyTable.parse(structuredClone(TABLE_DOCUMENT), tools);

export const NOW = 1_800_000_000_000;

export function run(overrides: Partial<BoundaryRun> = {}): BoundaryRun {
  return {
    run_id: 'run_1',
    tenant: 'acme',
    principal: 'agent:bot',
    role: 'agent',
    environment: 'production',
    capabilities: ['lookup_account.v2', 'preview_transfer.v1', 'commit_transfer.v1', 'start_export.v1', 'send_notice.v1'],
    expires_at: NOW + 3_600_000,
    stopped_at: null,
    ...overrides,
  };
}

export function proposal(overrides: Partial<Proposal> = {}): Proposal {
  return {
    proposal_id: 'p_1',
    tool: 'commit_transfer.v1',
    arguments: '{"amount":5}',
    arguments_sha256: 'sha-p1',
    target: { type: 'account', id: 'A-1', version: 3 },
    effect: 'Transfer 5',
    diff: { changes: [], recipients: [], amount: { minor: 500, currency: 'EUR' }, affected_records: 1, irreversible: [] },
    environment: 'production',
    run_id: 'run_1',
    tenant: 'acme',
    principal: 'agent:bot',
    created_at: NOW - 1000,
    expires_at: NOW + 900_000,
    ...overrides,
  };
}

/** What the ports hold for one test, and what they were asked. */
export interface World {
  readonly runs: Map<string, BoundaryRun>;
  readonly proposals: Map<string, { proposal: Proposal; state: 'open' | 'consumed' }>;
  readonly idempotency: Map<string, { state: string }>;
  /** The limiter's answer to every take. */
  rate: RateTake;
  readonly takes: unknown[][];
}

export function world(): World {
  return { runs: new Map([['run_1', run()]]), proposals: new Map(), idempotency: new Map(), rate: { allowed: true }, takes: [] };
}

export function depsOf(w: World, overrides: Partial<BoundaryDeps> = {}): BoundaryDeps {
  return {
    catalog,
    table,
    runs: { get: (id) => Promise.resolve(w.runs.get(id)) },
    limiter: {
      take: (...args) => {
        w.takes.push(args);
        return Promise.resolve(w.rate);
      },
    },
    proposals: { get: (id) => Promise.resolve(w.proposals.get(id)) },
    idempotency: { get: (key) => Promise.resolve(w.idempotency.get(key)) },
    maxArgumentBytes: 256,
    grantValidityMs: 600_000,
    proposalTtlMs: 900_000,
    ...overrides,
  };
}

export function command(tool: string, args: unknown, overrides: { run_id?: string; tenant?: string; raw?: string } = {}) {
  return {
    command_id: 'cmd_1',
    run_id: overrides.run_id ?? 'run_1',
    tenant: overrides.tenant ?? 'acme',
    tool,
    arguments: overrides.raw ?? JSON.stringify(args),
  };
}
