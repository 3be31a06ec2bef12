// A small pack written against the sdk only: a read, and a transfer preview/commit pair whose
// proposal carries the amount the preview computed.
import { definePreviewCommit, defineTool, defineToolPack, implement, proposalIdSchema } from '@gatehouse/sdk';
import type { ToolImplementation } from '@gatehouse/sdk';

const accountId = { type: 'string', pattern: '^A-[0-9]{1,8}$' } as const;
const money = {
  type: 'object',
  additionalProperties: false,
  required: ['minor', 'currency'],
  properties: { minor: { type: 'integer', minimum: 1 }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
} as const;

export const getBalance = defineTool({
  name: 'get_balance',
  version: 1,
  description: 'Read the balance of an account.',
  input: { type: 'object', additionalProperties: false, required: ['account_id'], properties: { account_id: accountId } },
  output: { type: 'object', additionalProperties: false, required: ['balance'], properties: { balance: money } },
  effect: 'read',
  retry: 'safe',
  timeoutMs: 1_000,
  cancel: 'none',
  maxResultBytes: 1_024,
});

const transferArguments = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to', 'amount', 'expected_version'],
  properties: { from: accountId, to: accountId, amount: money, expected_version: { type: 'integer', minimum: 1 } },
} as const;

export const transfer = definePreviewCommit({
  proposal: transferArguments,
  preview: {
    name: 'preview_transfer',
    version: 1,
    description: 'Compute a transfer between two accounts without moving anything.',
    input: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to', 'amount'],
      properties: { from: accountId, to: accountId, amount: money },
    },
    output: {
      type: 'object',
      additionalProperties: false,
      required: ['proposal_id', 'expires_at', 'effect', 'version', 'fee'],
      properties: {
        proposal_id: proposalIdSchema,
        expires_at: { type: 'string', format: 'date-time' },
        effect: { type: 'string' },
        version: { type: 'integer', minimum: 1 },
        fee: money,
      },
    },
    retry: 'safe',
    timeoutMs: 1_000,
    cancel: 'none',
    maxResultBytes: 1_024,
  },
  commit: {
    name: 'commit_transfer',
    version: 1,
    description: 'Run a previewed transfer. Takes only the proposal_id.',
    output: { type: 'object', additionalProperties: false, required: ['transfer_id'], properties: { transfer_id: { type: 'string' } } },
    retry: 'idempotent',
    approval: 'transfer',
    timeoutMs: 1_000,
    cancel: 'none',
    maxResultBytes: 1_024,
  },
});

/** A ledger the handlers talk to, made by `setup`. */
export interface Ledger {
  readonly url: string;
  readonly transfers: { from: string; to: string; minor: number }[];
}

/** The pack's handlers, bound to a ledger, by name. */
export function ledgerHandlers(ledger: Ledger) {
  const balance = implement(getBalance, {
    run: (args) => Promise.resolve({ balance: { minor: args.account_id.length, currency: 'EUR' } }),
  });
  const preview = implement(transfer.preview, {
    run: () => Promise.resolve({ version: 7, fee: { minor: 30, currency: 'EUR' } }),
    propose: (args, result) => ({
      arguments: { from: args.from, to: args.to, amount: args.amount, expected_version: result.version },
      target: { type: 'account', id: args.from, version: result.version },
      effect: `Move ${args.amount.minor} ${args.amount.currency} from ${args.from} to ${args.to}.`,
      diff: { changes: [], recipients: [], amount: args.amount, affectedRecords: 2, irreversible: [] },
    }),
  });
  const commit = implement(transfer.commit, {
    run: (args) => {
      ledger.transfers.push({ from: args.from, to: args.to, minor: args.amount.minor });
      return Promise.resolve({ transfer_id: `t-${ledger.transfers.length}` });
    },
    resourceOf: (args) => `account:${args.from}`,
  });
  return { balance, preview, commit };
}

export const ledgerTools = (ledger: Ledger): readonly ToolImplementation[] => {
  const { balance, preview, commit } = ledgerHandlers(ledger);
  return [balance, preview, commit];
};

export const ROLES = {
  roles: {
    teller: {
      description: 'Moves money with approval.',
      readOnly: false,
      tools: ['get_balance.v1', 'preview_transfer.v1', 'commit_transfer.v1'],
    },
    auditor: { description: 'Reads balances.', readOnly: true, tools: ['get_balance.v1'] },
  },
};

export const TABLE = {
  rules: [
    {
      id: 'transfer-approved',
      description: 'A transfer is approved by a supervisor.',
      match: { effect: 'write', approvalRules: ['transfer'] },
      decision: { kind: 'require_approval', approverRole: 'supervisor', ttlMs: 600_000 },
    },
  ],
};

export const bankPack = defineToolPack({
  name: 'bank',
  config: {
    LEDGER_URL: { doc: 'Base URL of the ledger.', default: 'http://127.0.0.1:9000/', parse: (raw) => raw.replace(/\/+$/, '') },
    LEDGER_TIMEOUT_MS: {
      doc: 'How long a ledger call may take.',
      default: '2000',
      parse: (raw) => {
        if (!/^[0-9]+$/.test(raw)) throw new Error('must be a whole number of milliseconds');
        return Number(raw);
      },
    },
    LEDGER_TOKEN: { doc: 'Bearer token for the ledger.', required: true, secret: true },
    LEDGER_REGION: { doc: 'Region hint; none when unset.' },
  },
  roles: new URL('./roles.json', import.meta.url),
  policyTable: new URL('./policy-table.json', import.meta.url),
  setup: (config): Ledger => ({ url: config.LEDGER_URL, transfers: [] }),
  tools: (ledger) => ledgerTools(ledger),
});
