import { definePreviewCommit, implement, proposalIdSchema } from '@gatehouse/sdk';
import type { StatusAnswer, ToolImplementation } from '@gatehouse/sdk';
import type { CustomersClient } from '../customers-client.js';
import { customerId, timestamp } from '../schema-parts.js';
import { expectShape } from '../upstream-body.js';
import { operationStatus } from './operation-status.js';

const message = {
  subject: { type: 'string', minLength: 1, maxLength: 200 },
  body: { type: 'string', minLength: 1, maxLength: 5_000 },
} as const;

/** What the agent asks to send, and — once previewed — exactly what is sent. */
const emailArguments = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'subject', 'body'],
  properties: { customer_id: customerId, ...message },
} as const;

const customerEmail = definePreviewCommit({
  proposal: emailArguments,
  preview: {
    name: 'preview_customer_email',
    version: 1,
    description:
      'Prepare an email to a customer without sending it: resolves the recipient and returns a proposal_id. Send it with send_customer_email.v1.',
    input: emailArguments,
    output: {
      type: 'object',
      additionalProperties: false,
      required: ['proposal_id', 'expires_at', 'effect', 'customer_id', 'recipient', 'subject', 'body'],
      properties: {
        proposal_id: proposalIdSchema,
        expires_at: timestamp,
        effect: { type: 'string' },
        customer_id: customerId,
        recipient: { type: 'string' },
        ...message,
      },
    },
    retry: 'safe',
    timeoutMs: 3_000,
    rateLimit: { limit: 60, windowMs: 60_000, per: 'run' },
    cancel: 'none',
    maxResultBytes: 8_192,
  },
  commit: {
    name: 'send_customer_email',
    version: 1,
    description:
      'Send a previewed email to the customer. Takes only the proposal_id from preview_customer_email.v1. Delivery cannot be undone.',
    output: {
      type: 'object',
      additionalProperties: false,
      required: ['message_id', 'recipient', 'sent_at'],
      properties: { message_id: { type: 'string' }, recipient: { type: 'string' }, sent_at: timestamp },
    },
    retry: 'idempotent',
    approval: 'customer-email',
    timeoutMs: 5_000,
    rateLimit: { limit: 20, windowMs: 60_000, per: 'tenant' },
    cancel: 'none',
    maxResultBytes: 2_048,
    external: true,
  },
});

export const previewCustomerEmail = customerEmail.preview;
export const sendCustomerEmail = customerEmail.commit;

function sent(body: unknown, write: boolean): unknown {
  return expectShape(
    body,
    (b) =>
      typeof b['message_id'] === 'string' ? { message_id: b['message_id'], recipient: b['recipient'], sent_at: b['sent_at'] } : undefined,
    write,
  );
}

/** The email preview and send, bound to the customers service. */
export function customerEmailTools(customers: CustomersClient): readonly ToolImplementation[] {
  const preview = implement(previewCustomerEmail, {
    async run(args, context) {
      const { body } = await customers.call({ method: 'GET', path: `/customers/${encodeURIComponent(args.customer_id)}`, context });
      const recipient = expectShape(body, (b) => (typeof b['email'] === 'string' ? b['email'] : undefined), false);
      return { customer_id: args.customer_id, recipient, subject: args.subject, body: args.body };
    },
    propose(args, result) {
      return {
        arguments: { customer_id: args.customer_id, subject: args.subject, body: args.body },
        target: { type: 'customer', id: args.customer_id, version: null },
        effect: `Send an email “${args.subject}” to ${result.recipient} (customer ${args.customer_id}).`,
        diff: {
          changes: [
            { field: 'subject', before: null, after: args.subject },
            { field: 'body', before: null, after: args.body },
          ],
          recipients: [result.recipient],
          amount: null,
          affectedRecords: 1,
          irreversible: ['the email is delivered to the customer and cannot be recalled'],
        },
      };
    },
  });
  const send = implement(sendCustomerEmail, {
    // The stored proposal's arguments: exactly what the approver saw.
    async run(email, context) {
      if (context.idempotencyKey === null) throw new Error('an email is sent only under an idempotency key made by the executor');
      const { body } = await customers.call({
        method: 'POST',
        path: `/customers/${encodeURIComponent(email.customer_id)}/emails`,
        body: email,
        idempotencyKey: context.idempotencyKey,
        context,
        write: true,
      });
      return sent(body, true);
    },
    status: (key, context): Promise<StatusAnswer> => operationStatus(customers, key, context, (response) => sent(response, false)),
    resourceOf: (email) => `customer:${email.customer_id}`,
  });
  return [preview, send];
}
