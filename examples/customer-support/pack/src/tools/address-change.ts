import { definePreviewCommit, defineTool, implement, isToolFailure, proposalIdSchema, toolError, ToolFailure } from '@gatehouse/sdk';
import type { ExecutionContext, PreviewResultOf, SchemaType, StatusAnswer, ToolImplementation } from '@gatehouse/sdk';
import type { CustomersClient } from '../customers-client.js';
import { address, customerId, destination, timestamp } from '../schema-parts.js';
import { expectShape, readAddress, readStrings } from '../upstream-body.js';
import type { Address, Body } from '../upstream-body.js';
import { operationStatus } from './operation-status.js';

/** The arguments an address change runs with: what the preview computed (v2) or what the caller sent (retired v1). */
const addressChangeArguments = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'expected_version', 'destination'],
  properties: { customer_id: customerId, expected_version: { type: 'integer', minimum: 1 }, destination },
} as const;
export type AddressChangeArguments = SchemaType<typeof addressChangeArguments>;

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

const addressChange = definePreviewCommit({
  proposal: addressChangeArguments,
  preview: {
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
        proposal_id: proposalIdSchema,
        expires_at: timestamp,
        effect: { type: 'string' },
        customer_id: customerId,
        current_version: { type: 'integer', minimum: 1 },
        before: address,
        after: address,
        changed_fields: { type: 'array', maxItems: 10, items: { type: 'string' } },
      },
    },
    retry: 'safe',
    timeoutMs: 3_000,
    rateLimit: { limit: 120, windowMs: 60_000, per: 'run' },
    cancel: 'none',
    maxResultBytes: 8_192,
  },
  commit: {
    name: 'commit_address_change',
    version: 2,
    description:
      'Apply a previewed address change. Takes only the proposal_id from preview_address_change.v1; the approved proposal is what runs.',
    output: committedView,
    retry: 'idempotent',
    approval: 'address-change',
    // The customers service stores the key in the write's transaction and replays its answer.
    honoursIdempotencyKey: true,
    timeoutMs: 5_000,
    cancel: 'none',
    maxResultBytes: 4_096,
  },
});

export const previewAddressChange = addressChange.preview;
export const commitAddressChangeV2 = addressChange.commit;

export const commitAddressChangeV1 = defineTool({
  name: 'commit_address_change',
  version: 1,
  description:
    'Legacy: change a customer’s shipping address from free arguments. Retired; use preview_address_change.v1 then commit_address_change.v2.',
  input: addressChangeArguments,
  output: committedView,
  effect: 'write',
  retry: 'idempotent',
  approval: 'address-change',
  timeoutMs: 5_000,
  cancel: 'none',
  maxResultBytes: 4_096,
  retired: true,
});

type Preview = PreviewResultOf<typeof previewAddressChange>;

const describe = (a: Address): string => `${a.line1}, ${a.city}${a.postal_code === null ? '' : ` ${a.postal_code}`}, ${a.country}`;

/** The service's preview, reduced to the view (addresses without their ids or anything else). */
function previewOf(b: Body): Preview | undefined {
  const { customer_id: customer, current_version: version } = b;
  const before = readAddress(b['before']);
  const after = readAddress(b['after']);
  const changed = readStrings(b['changed_fields']);
  if (typeof customer !== 'string' || typeof version !== 'number' || before === undefined || after === undefined || changed === undefined)
    return undefined;
  return { customer_id: customer, current_version: version, before, after, changed_fields: changed };
}

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

/** A version conflict is answered by reading again and proposing anew. */
function withNextStep(failure: unknown): unknown {
  if (isToolFailure(failure) && failure.error.code === 'VERSION_CONFLICT') {
    return new ToolFailure(
      toolError('VERSION_CONFLICT', 'Customer changed after the proposal was created', {
        field: '/expected_version',
        next: previewAddressChange.address,
        details: failure.error.details,
      }),
    );
  }
  return failure;
}

/** The commit of both versions: the stored proposal's arguments (v2) or the validated call's (v1). */
function committer(customers: CustomersClient) {
  return async (args: AddressChangeArguments, context: ExecutionContext): Promise<unknown> => {
    if (context.idempotencyKey === null) throw new Error('an address change runs only under an idempotency key made by the executor');
    try {
      const { body } = await customers.call({
        method: 'POST',
        path: `/customers/${encodeURIComponent(args.customer_id)}/address-changes`,
        // The approved arguments as they are: the service checks their hash against the assertion's.
        body: args,
        idempotencyKey: context.idempotencyKey,
        context,
        write: true,
      });
      return committed(body, true);
    } catch (failure) {
      throw withNextStep(failure);
    }
  };
}

/** The three address-change tools, bound to the customers service. */
export function addressChangeTools(customers: CustomersClient): readonly ToolImplementation[] {
  const commit = committer(customers);
  const status = (key: string, context: ExecutionContext): Promise<StatusAnswer> =>
    operationStatus(customers, key, context, (response) => committed(response, false), previewAddressChange.address);
  const resourceOf = (args: AddressChangeArguments): string => `customer:${args.customer_id}`;

  const preview = implement(previewAddressChange, {
    async run(args, context) {
      const { body } = await customers.call({
        method: 'POST',
        path: `/customers/${encodeURIComponent(args.customer_id)}/address-changes/preview`,
        body: { destination: args.destination },
        context,
      });
      return expectShape(body, previewOf, false);
    },
    propose(args, result) {
      return {
        arguments: { customer_id: args.customer_id, expected_version: result.current_version, destination: args.destination },
        target: { type: 'customer', id: result.customer_id, version: result.current_version },
        effect: `Change the shipping address of customer ${result.customer_id} from “${describe(result.before)}” to “${describe(result.after)}”.`,
        diff: {
          changes: [{ field: 'shipping_address', before: result.before, after: result.after }],
          recipients: [],
          amount: null,
          affectedRecords: result.changed_fields.length === 0 ? 0 : 1,
          irreversible: [],
        },
      };
    },
  });
  // A commit runs with its proposal's arguments, never with anything the agent sent.
  const commitV2 = implement(commitAddressChangeV2, { run: commit, status, resourceOf });
  const commitV1 = implement(commitAddressChangeV1, { run: commit, status, resourceOf });
  return [preview, commitV1, commitV2];
}
