import { defineTool, implement } from '@gatehouse/contracts';
import type { ExecutionContext, StatusAnswer } from '@gatehouse/contracts';
import { callCustomers, expectShape } from '../customers-api.js';
import { customerId, proposalId, timestamp } from '../schema-parts.js';
import { operationStatus } from './operation-status.js';

const message = {
  subject: { type: 'string', minLength: 1, maxLength: 200 },
  body: { type: 'string', minLength: 1, maxLength: 5_000 },
} as const;

export const previewCustomerEmail = defineTool({
  name: 'preview_customer_email',
  version: 1,
  description: 'Prepare an email to a customer without sending it: resolves the recipient and returns a proposal_id. Send it with send_customer_email.v1.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['customer_id', 'subject', 'body'],
    properties: { customer_id: customerId, ...message },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['proposal_id', 'expires_at', 'effect', 'customer_id', 'recipient', 'subject', 'body'],
    properties: {
      proposal_id: proposalId,
      expires_at: timestamp,
      effect: { type: 'string' },
      customer_id: customerId,
      recipient: { type: 'string' },
      ...message,
    },
  },
  effect: 'read',
  retry: 'safe',
  timeoutMs: 3_000,
  rateLimit: { limit: 60, windowMs: 60_000, per: 'run' },
  cancel: 'none',
  maxResultBytes: 8_192,
  commits: 'send_customer_email.v1',
} as const);

export const sendCustomerEmail = defineTool({
  name: 'send_customer_email',
  version: 1,
  description: 'Send a previewed email to the customer. Takes only the proposal_id from preview_customer_email.v1. Delivery cannot be undone.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['proposal_id'],
    properties: { proposal_id: proposalId },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['message_id', 'recipient', 'sent_at'],
    properties: { message_id: { type: 'string' }, recipient: { type: 'string' }, sent_at: timestamp },
  },
  effect: 'write',
  retry: 'idempotent',
  approval: 'customer-email',
  timeoutMs: 5_000,
  rateLimit: { limit: 20, windowMs: 60_000, per: 'tenant' },
  cancel: 'none',
  maxResultBytes: 2_048,
  previewedBy: 'preview_customer_email.v1',
  external: true,
} as const);

interface EmailArguments {
  readonly customer_id: string;
  readonly subject: string;
  readonly body: string;
}

function sent(body: unknown, write: boolean): unknown {
  return expectShape(
    body,
    (b) => (typeof b['message_id'] === 'string' ? { message_id: b['message_id'], recipient: b['recipient'], sent_at: b['sent_at'] } : undefined),
    write,
  );
}

export const previewCustomerEmailTool = implement(previewCustomerEmail, {
  async run(args, context) {
    const { body } = await callCustomers({ method: 'GET', path: `/customers/${encodeURIComponent(args.customer_id)}`, context });
    const recipient = expectShape(body, (b) => (typeof b['email'] === 'string' ? b['email'] : undefined), false);
    return { customer_id: args.customer_id, recipient, subject: args.subject, body: args.body };
  },
  propose(args, result) {
    const { recipient } = result as { recipient: string };
    return {
      arguments: { customer_id: args.customer_id, subject: args.subject, body: args.body },
      target: { type: 'customer', id: args.customer_id, version: null },
      effect: `Send an email “${args.subject}” to ${recipient} (customer ${args.customer_id}).`,
      diff: {
        changes: [
          { field: 'subject', before: null, after: args.subject },
          { field: 'body', before: null, after: args.body },
        ],
        recipients: [recipient],
        amount: null,
        affectedRecords: 1,
        irreversible: ['the email is delivered to the customer and cannot be recalled'],
      },
    };
  },
});

export const sendCustomerEmailTool = implement(sendCustomerEmail, {
  async run(args, context: ExecutionContext) {
    const email = args as unknown as EmailArguments;
    if (context.idempotencyKey === null) throw new Error('an email is sent only under an idempotency key made by the executor');
    const { body } = await callCustomers({
      method: 'POST',
      path: `/customers/${encodeURIComponent(email.customer_id)}/emails`,
      body: { subject: email.subject, body: email.body },
      idempotencyKey: context.idempotencyKey,
      context,
      write: true,
    });
    return sent(body, true);
  },
  status: (key, context): Promise<StatusAnswer> => operationStatus(key, context, (response) => sent(response, false)),
  resourceOf: (args) => `customer:${(args as unknown as EmailArguments).customer_id}`,
});
