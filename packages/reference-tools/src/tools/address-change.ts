import { defineTool, implement, toolError, ToolFailure } from '@gatehouse/contracts';
import type { ExecutionContext, StatusAnswer } from '@gatehouse/contracts';
import { callCustomers, expectShape } from '../customers-api.js';
import { address, customerId, destination, proposalId, timestamp } from '../schema-parts.js';
import { operationStatus } from './operation-status.js';

const committedView = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'previous_version', 'new_version', 'changed_fields', 'committed_at'],
  properties: {
    customer_id: customerId,
    previous_version: { type: 'integer', minimum: 1 },
    new_version: { type: 'integer', minimum: 1 },
    changed_fields: { type: 'array', maxItems: 10, items: { type: 'string' } },
    committed_at: timestamp,
  },
} as const;

export const previewAddressChange = defineTool({
  name: 'preview_address_change',
  version: 1,
  description:
    'Compute what changing a customer’s shipping address would do, without changing anything. Returns a proposal_id and the exact effect; commit it with commit_address_change.v2.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['customer_id', 'destination'],
    properties: { customer_id: customerId, destination },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['proposal_id', 'expires_at', 'effect', 'customer_id', 'current_version', 'before', 'after', 'changed_fields'],
    properties: {
      proposal_id: proposalId,
      expires_at: timestamp,
      effect: { type: 'string' },
      customer_id: customerId,
      current_version: { type: 'integer', minimum: 1 },
      before: address,
      after: address,
      changed_fields: { type: 'array', maxItems: 10, items: { type: 'string' } },
    },
  },
  effect: 'read',
  retry: 'safe',
  timeoutMs: 3_000,
  rateLimit: { limit: 120, windowMs: 60_000, per: 'run' },
  cancel: 'none',
  maxResultBytes: 8_192,
  commits: 'commit_address_change.v2',
} as const);

export const commitAddressChangeV1 = defineTool({
  name: 'commit_address_change',
  version: 1,
  description: 'Legacy: change a customer’s shipping address from free arguments. Retired; use preview_address_change.v1 then commit_address_change.v2.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['customer_id', 'expected_version', 'destination'],
    properties: { customer_id: customerId, expected_version: { type: 'integer', minimum: 1 }, destination },
  },
  output: committedView,
  effect: 'write',
  retry: 'idempotent',
  approval: 'address-change',
  timeoutMs: 5_000,
  cancel: 'none',
  maxResultBytes: 4_096,
  retired: true,
} as const);

export const commitAddressChangeV2 = defineTool({
  name: 'commit_address_change',
  version: 2,
  description: 'Apply a previewed address change. Takes only the proposal_id from preview_address_change.v1; the approved proposal is what runs.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['proposal_id'],
    properties: { proposal_id: proposalId },
  },
  output: committedView,
  effect: 'write',
  retry: 'idempotent',
  approval: 'address-change',
  timeoutMs: 5_000,
  cancel: 'none',
  maxResultBytes: 4_096,
  previewedBy: 'preview_address_change.v1',
} as const);

/** The arguments a commit runs with: what the preview computed, stored in the proposal. */
export interface AddressChangeArguments {
  readonly customer_id: string;
  readonly expected_version: number;
  readonly destination: { kind: 'saved'; address_id: string } | { kind: 'new'; line1: string; city: string; country: string; postal_code?: string };
}

type Address = { line1: string; city: string; country: string; postal_code: string | null };
const view = (a: Address): Address => ({ line1: a.line1, city: a.city, country: a.country, postal_code: a.postal_code });
const describe = (a: Address): string => `${a.line1}, ${a.city}${a.postal_code === null ? '' : ` ${a.postal_code}`}, ${a.country}`;

function committed(body: unknown, write: boolean): unknown {
  return expectShape(
    body,
    (b) =>
      typeof b['new_version'] === 'number' && typeof b['customer_id'] === 'string'
        ? {
            customer_id: b['customer_id'],
            previous_version: b['previous_version'],
            new_version: b['new_version'],
            changed_fields: b['changed_fields'],
            committed_at: b['committed_at'],
          }
        : undefined,
    write,
  );
}

async function commit(args: AddressChangeArguments, context: ExecutionContext): Promise<unknown> {
  if (context.idempotencyKey === null) {
    throw new Error('an address change runs only under an idempotency key made by the executor');
  }
  try {
    const { body } = await callCustomers({
      method: 'POST',
      path: `/customers/${encodeURIComponent(args.customer_id)}/address-changes`,
      body: { expected_version: args.expected_version, destination: args.destination },
      idempotencyKey: context.idempotencyKey,
      context,
      write: true,
    });
    return committed(body, true);
  } catch (failure) {
    throw withNextStep(failure);
  }
}

/** A version conflict is answered by reading again and proposing anew. */
function withNextStep(failure: unknown): unknown {
  if (failure instanceof ToolFailure && failure.error.code === 'VERSION_CONFLICT') {
    return new ToolFailure(
      toolError('VERSION_CONFLICT', 'Customer changed after the proposal was created', {
        field: '/expected_version',
        next: 'preview_address_change.v1',
        details: failure.error.details,
      }),
    );
  }
  return failure;
}

function status(key: string, context: ExecutionContext): Promise<StatusAnswer> {
  return operationStatus(key, context, (response) => committed(response, false), 'preview_address_change.v1');
}

export const previewAddressChangeTool = implement(previewAddressChange, {
  async run(args, context) {
    const { body } = await callCustomers({
      method: 'POST',
      path: `/customers/${encodeURIComponent(args.customer_id)}/address-changes/preview`,
      body: { destination: args.destination },
      context,
    });
    const preview = body as { customer_id: string; current_version: number; before: Address; after: Address; changed_fields: string[] };
    return {
      customer_id: preview.customer_id,
      current_version: preview.current_version,
      before: view(preview.before),
      after: view(preview.after),
      changed_fields: preview.changed_fields,
    };
  },
  propose(args, result) {
    const preview = result as { customer_id: string; current_version: number; before: Address; after: Address; changed_fields: string[] };
    return {
      arguments: { customer_id: args.customer_id, expected_version: preview.current_version, destination: args.destination },
      target: { type: 'customer', id: preview.customer_id, version: preview.current_version },
      effect: `Change the shipping address of customer ${preview.customer_id} from “${describe(preview.before)}” to “${describe(preview.after)}”.`,
      diff: {
        changes: [{ field: 'shipping_address', before: view(preview.before), after: view(preview.after) }],
        recipients: [],
        amount: null,
        affectedRecords: preview.changed_fields.length === 0 ? 0 : 1,
        irreversible: [],
      },
    };
  },
});

export const commitAddressChangeV1Tool = implement(commitAddressChangeV1, {
  run: (args, context) => commit(args as AddressChangeArguments, context),
  status,
  resourceOf: (args) => `customer:${args.customer_id}`,
});

export const commitAddressChangeV2Tool = implement(commitAddressChangeV2, {
  // A commit runs with its proposal's arguments, never with anything the agent sent.
  run: (args, context) => commit(args as unknown as AddressChangeArguments, context),
  status,
  resourceOf: (args) => `customer:${(args as unknown as AddressChangeArguments).customer_id}`,
});
