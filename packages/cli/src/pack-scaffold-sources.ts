// The JavaScript of a new tool pack (`gatehouse pack init`): plain ES modules with JSDoc types and
// `// @ts-check`, so the pack loads without a build step and an editor still checks it against the
// types of @gatehouse/sdk. One read tool and one preview/commit pair that needs approval, over an
// in-memory stand-in for the system of record.

/** src/index.js: the pack itself. */
export function indexSource(name: string, exportName: string): string {
  return `// @ts-check
// The tool pack: what a Gatehouse service hosts (GATEHOUSE_TOOL_PACK=<this package or its directory>).
import { defineToolPack } from '@gatehouse/sdk';
import { getTicketTool } from './get-ticket.js';
import { priorityChangeTools } from './priority-change.js';
import { TicketStore } from './ticket-store.js';

/**
 * TICKETS_SEED: a whole number from 0 to 1000. A parse function throws to refuse a value; the
 * service then names the variable and the reason before anything starts.
 * @param {string} raw
 */
function ticketCount(raw) {
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 0 || count > 1000) throw new Error('must be a whole number from 0 to 1000');
  return count;
}

export const ${exportName} = defineToolPack({
  name: '${name}',
  // The pack's own environment variables, read once at start-up and handed to setup, typed.
  config: {
    TICKETS_SEED: { doc: 'How many demo tickets (T-1 … T-n) the in-memory stand-in starts with.', default: '3', parse: ticketCount },
  },
  roles: new URL('../config/roles.json', import.meta.url),
  policyTable: new URL('../config/policy-table.json', import.meta.url),
  approvers: new URL('../config/approvers.json', import.meta.url),
  // Who may approve when the approval service signs people in at an identity provider: their claims there.
  approverPolicy: new URL('../config/approver-policy.json', import.meta.url),
  // The only place that reads configuration or builds clients: replace the in-memory stand-in with
  // a client of your system of record here.
  setup: (config) => ({ tickets: new TicketStore(config.TICKETS_SEED) }),
  // Binds the handlers to what setup built; no I/O here.
  tools: ({ tickets }) => [getTicketTool(tickets), ...priorityChangeTools(tickets)],
  // The audience your system of record checks on the call assertion every request carries: a
  // client sends \`authorizedFetch(context, url, init)\` (Authorization: Bearer <assertion>), and the
  // service verifies it with CallAssertionVerifier (docs/identity.md, "Calls to systems of record").
  credential: () => ({ audience: '${name}' }),
});
`;
}

/** src/ticket-schema.js: the schema fragments the tools share. */
export const TICKET_SCHEMA_SOURCE = `// @ts-check
// Schema fragments the tools share, written \`@type {const}\` so the SDK types handlers by them.
// Every object is closed: the catalog refuses an open one at load.

export const ticketId = /** @type {const} */ ({ type: 'string', pattern: '^T-[0-9]{1,10}$', description: 'Ticket id, e.g. T-1.' });

export const priority = /** @type {const} */ ({ type: 'string', enum: ['low', 'normal', 'high', 'urgent'] });

export const timestamp = /** @type {const} */ ({ type: 'string', format: 'date-time' });

/** A ticket as the tools show it to an agent. */
export const ticketView = /** @type {const} */ ({
  type: 'object',
  additionalProperties: false,
  required: ['ticket_id', 'title', 'priority', 'version', 'updated_at'],
  properties: {
    ticket_id: ticketId,
    title: { type: 'string', maxLength: 200 },
    priority,
    version: { type: 'integer', minimum: 1 },
    updated_at: timestamp,
  },
});
`;

/** src/ticket-store.js: the in-memory stand-in for a system of record. */
export const TICKET_STORE_SOURCE = `// @ts-check
// A stand-in for your system of record, in memory, so the pack runs before it is connected to
// anything. Replace it with a client of the real service, built in setup from the configuration.

/** @typedef {'low' | 'normal' | 'high' | 'urgent'} Priority */
/** @typedef {{ ticket_id: string, title: string, priority: Priority, version: number, updated_at: string }} Ticket */

export class TicketStore {
  /** @type {Map<string, Ticket>} */
  #tickets = new Map();
  /** Results of writes by idempotency key: a retried write answers its first result instead of writing twice. */
  /** @type {Map<string, Ticket>} */
  #writes = new Map();

  /** @param {number} count tickets T-1 … T-count */
  constructor(count) {
    for (let n = 1; n <= count; n += 1) {
      const id = 'T-' + String(n);
      this.#tickets.set(id, { ticket_id: id, title: 'Demo ticket ' + String(n), priority: 'normal', version: 1, updated_at: new Date(0).toISOString() });
    }
  }

  /**
   * @param {string} id
   * @returns {Ticket | undefined}
   */
  get(id) {
    const ticket = this.#tickets.get(id);
    return ticket === undefined ? undefined : { ...ticket };
  }

  /**
   * Sets a ticket's priority if it is still at \`expectedVersion\`, once per idempotency key.
   * @param {string} id
   * @param {number} expectedVersion
   * @param {Priority} priority
   * @param {string} idempotencyKey
   * @returns {Ticket | 'not_found' | 'version_conflict'}
   */
  setPriority(id, expectedVersion, priority, idempotencyKey) {
    const done = this.#writes.get(idempotencyKey);
    if (done !== undefined) return { ...done };
    const ticket = this.#tickets.get(id);
    if (ticket === undefined) return 'not_found';
    if (ticket.version !== expectedVersion) return 'version_conflict';
    const changed = { ...ticket, priority, version: ticket.version + 1, updated_at: new Date().toISOString() };
    this.#tickets.set(id, changed);
    this.#writes.set(idempotencyKey, changed);
    return { ...changed };
  }

  /**
   * The result of the write made under an idempotency key, if one was made.
   * @param {string} idempotencyKey
   * @returns {Ticket | undefined}
   */
  writeOf(idempotencyKey) {
    const done = this.#writes.get(idempotencyKey);
    return done === undefined ? undefined : { ...done };
  }
}
`;

/** src/get-ticket.js: the read tool. */
export const GET_TICKET_SOURCE = `// @ts-check
import { defineTool, implement, toolError, ToolFailure } from '@gatehouse/sdk';
import { ticketId, ticketView } from './ticket-schema.js';

/** A read: safe to retry, no approval. A contract is versioned: change it by adding get_ticket.v2. */
export const getTicket = defineTool({
  name: 'get_ticket',
  version: 1,
  description: 'Read one ticket: its title, priority and record version. Use before proposing a change.',
  input: { type: 'object', additionalProperties: false, required: ['ticket_id'], properties: { ticket_id: ticketId } },
  output: ticketView,
  effect: 'read',
  retry: 'safe',
  timeoutMs: 2000,
  cancel: 'none',
  maxResultBytes: 4096,
});

/** @param {import('./ticket-store.js').TicketStore} tickets */
export function getTicketTool(tickets) {
  return implement(getTicket, {
    run: async (args) => {
      const ticket = tickets.get(args.ticket_id);
      if (ticket === undefined) throw new ToolFailure(toolError('NOT_FOUND', 'No ticket ' + args.ticket_id, { field: '/ticket_id' }));
      return ticket;
    },
  });
}
`;

/** src/priority-change.js: the preview/commit pair that needs approval. */
export const PRIORITY_CHANGE_SOURCE = `// @ts-check
import { definePreviewCommit, implement, proposalIdSchema, toolError, ToolFailure } from '@gatehouse/sdk';
import { priority, ticketId, ticketView, timestamp } from './ticket-schema.js';

/** What is proposed, approved and run: the commit receives exactly these arguments, as stored. */
const priorityChange = /** @type {const} */ ({
  type: 'object',
  additionalProperties: false,
  required: ['ticket_id', 'expected_version', 'priority'],
  properties: { ticket_id: ticketId, expected_version: { type: 'integer', minimum: 1 }, priority },
});

/**
 * A write as a pair: the preview (a read) computes the change and Gatehouse stores it as a proposal;
 * a person approves it (the policy table names who); the commit takes only the proposal_id.
 */
const pair = definePreviewCommit({
  proposal: priorityChange,
  preview: {
    name: 'preview_ticket_priority_change',
    version: 1,
    description: 'Propose a new priority for a ticket without changing it: returns the change and a proposal_id. Apply it with commit_ticket_priority_change.v1 once approved.',
    input: { type: 'object', additionalProperties: false, required: ['ticket_id', 'priority'], properties: { ticket_id: ticketId, priority } },
    output: {
      type: 'object',
      additionalProperties: false,
      required: ['proposal_id', 'expires_at', 'effect', 'ticket_id', 'current_version', 'before', 'after'],
      properties: {
        proposal_id: proposalIdSchema,
        expires_at: timestamp,
        effect: { type: 'string', maxLength: 500 },
        ticket_id: ticketId,
        current_version: { type: 'integer', minimum: 1 },
        before: priority,
        after: priority,
      },
    },
    retry: 'safe',
    timeoutMs: 2000,
    cancel: 'none',
    maxResultBytes: 4096,
  },
  commit: {
    name: 'commit_ticket_priority_change',
    version: 1,
    description: 'Apply an approved priority change. Takes only the proposal_id from preview_ticket_priority_change.v1.',
    output: ticketView,
    retry: 'idempotent',
    // The approval rule the policy table matches (config/policy-table.json).
    approval: 'ticket-priority-change',
    timeoutMs: 5000,
    cancel: 'none',
    maxResultBytes: 4096,
  },
});

export const previewTicketPriorityChange = pair.preview;
export const commitTicketPriorityChange = pair.commit;

/** @param {import('./ticket-store.js').TicketStore} tickets */
export function priorityChangeTools(tickets) {
  const preview = implement(previewTicketPriorityChange, {
    // Returns the view without proposal_id, expires_at and effect: Gatehouse adds them once the proposal is stored.
    run: async (args) => {
      const ticket = tickets.get(args.ticket_id);
      if (ticket === undefined) throw new ToolFailure(toolError('NOT_FOUND', 'No ticket ' + args.ticket_id, { field: '/ticket_id' }));
      return { ticket_id: ticket.ticket_id, current_version: ticket.version, before: ticket.priority, after: args.priority };
    },
    propose: (args, result) => ({
      arguments: { ticket_id: args.ticket_id, expected_version: result.current_version, priority: args.priority },
      target: { type: 'ticket', id: args.ticket_id, version: result.current_version },
      effect: 'Change the priority of ticket ' + args.ticket_id + ' from ' + result.before + ' to ' + result.after + '.',
      diff: { changes: [{ field: 'priority', before: result.before, after: result.after }], recipients: [], amount: null, affectedRecords: 1, irreversible: [] },
    }),
  });
  const commit = implement(commitTicketPriorityChange, {
    run: async (change, context) => {
      if (context.idempotencyKey === null) throw new Error('a write runs only under the idempotency key the executor makes');
      const outcome = tickets.setPriority(change.ticket_id, change.expected_version, change.priority, context.idempotencyKey);
      if (outcome === 'not_found') throw new ToolFailure(toolError('NOT_FOUND', 'No ticket ' + change.ticket_id));
      if (outcome === 'version_conflict') throw new ToolFailure(toolError('VERSION_CONFLICT', 'Ticket ' + change.ticket_id + ' changed after the proposal; preview again'));
      return outcome;
    },
    // Asked when a write's outcome is unclear (a timeout): a real service answers from its idempotency records.
    status: async (key) => {
      const done = tickets.writeOf(key);
      return done === undefined ? { state: 'unknown' } : { state: 'succeeded', result: done };
    },
    // Writes to one ticket are serialized across executors.
    resourceOf: (change) => 'ticket:' + change.ticket_id,
  });
  return [preview, commit];
}
`;
