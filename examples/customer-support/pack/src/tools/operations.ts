import { defineTool, implement } from '@gatehouse/sdk';
import type { StatusAnswer, ToolImplementation } from '@gatehouse/sdk';
import type { CustomersClient } from '../customers-client.js';
import { customerId, operationId, timestamp } from '../schema-parts.js';
import { expectShape } from '../upstream-body.js';
import { operationStatus } from './operation-status.js';

const operationView = {
  type: 'object',
  additionalProperties: false,
  required: ['operation_id', 'state', 'progress', 'result_url', 'created_at', 'updated_at'],
  properties: {
    operation_id: operationId,
    state: { enum: ['queued', 'running', 'succeeded', 'failed', 'cancelled'] },
    progress: { type: 'integer', minimum: 0, maximum: 100 },
    result_url: { type: ['string', 'null'] },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const startCustomerExport = defineTool({
  name: 'start_customer_export',
  version: 1,
  description: 'Start exporting one customer’s records as a file. Returns an operation to poll with get_operation.v1; it may take minutes.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['customer_id', 'format'],
    properties: { customer_id: customerId, format: { enum: ['csv', 'json'] } },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['operation_id', 'state'],
    properties: { operation_id: operationId, state: { const: 'queued' } },
  },
  effect: 'write',
  retry: 'idempotent',
  approval: 'customer-export',
  timeoutMs: 5_000,
  rateLimit: { limit: 10, windowMs: 60_000, per: 'tenant' },
  cancel: 'cooperative',
  maxResultBytes: 1_024,
  destructive: false,
} as const);

export const getOperation = defineTool({
  name: 'get_operation',
  version: 1,
  description: 'Read the state of a long-running operation (queued, running, succeeded, failed, cancelled) and its progress.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['operation_id'],
    properties: { operation_id: operationId },
  },
  output: operationView,
  effect: 'read',
  retry: 'safe',
  timeoutMs: 2_000,
  cancel: 'none',
  maxResultBytes: 2_048,
} as const);

export const cancelOperation = defineTool({
  name: 'cancel_operation',
  version: 1,
  description:
    'Ask a long-running operation to stop. Answers stopped, already_completed or not_interruptible — truthfully; nothing already done is undone.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['operation_id'],
    properties: { operation_id: operationId },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['operation_id', 'outcome', 'state'],
    properties: {
      operation_id: operationId,
      outcome: { enum: ['stopped', 'already_completed', 'not_interruptible'] },
      state: { enum: ['queued', 'running', 'succeeded', 'failed', 'cancelled'] },
    },
  },
  effect: 'write',
  retry: 'idempotent',
  approval: 'cancel-operation',
  timeoutMs: 3_000,
  cancel: 'none',
  maxResultBytes: 1_024,
} as const);

function started(body: unknown, write: boolean): unknown {
  return expectShape(body, (b) => (typeof b['job_id'] === 'string' ? { operation_id: b['job_id'], state: b['state'] } : undefined), write);
}

/** The export operations, bound to the customers service. */
export function operationTools(customers: CustomersClient): readonly ToolImplementation[] {
  const start = implement(startCustomerExport, {
    async run(args, context) {
      if (context.idempotencyKey === null) throw new Error('an export starts only under an idempotency key made by the executor');
      const { body } = await customers.call({
        method: 'POST',
        path: '/exports',
        body: args,
        idempotencyKey: context.idempotencyKey,
        context,
        write: true,
      });
      return started(body, true);
    },
    status: (key, context): Promise<StatusAnswer> => operationStatus(customers, key, context, (response) => started(response, false)),
    resourceOf: (args) => `customer-export:${args.customer_id}`,
  });

  const get = implement(getOperation, {
    async run(args, context) {
      const { body } = await customers.call({ method: 'GET', path: `/exports/${encodeURIComponent(args.operation_id)}`, context });
      return expectShape(
        body,
        (job) =>
          typeof job['job_id'] === 'string'
            ? {
                operation_id: job['job_id'],
                state: job['state'],
                progress: job['progress'],
                result_url: job['result_url'],
                created_at: job['created_at'],
                updated_at: job['updated_at'],
              }
            : undefined,
        false,
      );
    },
  });

  const cancel = implement(cancelOperation, {
    async run(args, context) {
      // Cancelling is idempotent in the service itself: asking twice answers truthfully twice.
      const { body } = await customers.call({
        method: 'POST',
        path: `/exports/${encodeURIComponent(args.operation_id)}/cancel`,
        body: args,
        // Its assertion names the key: the service checks the two agree, as for every write.
        ...(context.idempotencyKey === null ? {} : { idempotencyKey: context.idempotencyKey }),
        context,
        write: true,
      });
      return expectShape(
        body,
        (b) =>
          typeof b['outcome'] === 'string' ? { operation_id: args.operation_id, outcome: b['outcome'], state: b['state'] } : undefined,
        true,
      );
    },
    resourceOf: (args) => `operation:${args.operation_id}`,
  });
  return [start, get, cancel];
}
