import { definePreviewCommit, implement, isToolFailure, proposalIdSchema, toolError, ToolFailure } from '@gatehouse/sdk';
import type { PreviewResultOf, SchemaType, StatusAnswer, ToolArgs, ToolError, ToolImplementation } from '@gatehouse/sdk';
import { moneyText } from '../money-text.js';
import { upstreamToolError } from '../refunds-client.js';
import type { RefundsClient } from '../refunds-client.js';
import { money, orderId, refundAmount, refundId, refundReason, timestamp, version } from '../schema-parts.js';
import { expectShape, isBody, readInteger, readMoney, readReason, readString } from '../upstream-body.js';
import type { Body } from '../upstream-body.js';

/** What a refund runs with: exactly what the preview computed and the approver saw. */
const refundArguments = {
  type: 'object',
  additionalProperties: false,
  required: ['order_id', 'amount', 'reason', 'expected_version'],
  properties: { order_id: orderId, amount: refundAmount, reason: refundReason, expected_version: version },
} as const;
export type RefundArguments = SchemaType<typeof refundArguments>;

/** The one consequence of a refund that nobody can undo. */
export const REFUND_IRREVERSIBLE = 'money leaves the merchant';

const refund = definePreviewCommit({
  proposal: refundArguments,
  preview: {
    name: 'preview_refund',
    version: 1,
    description:
      'Compute what refunding part or all of an order would do, without moving any money. Returns a proposal_id and the exact effect; commit it with commit_refund.v1.',
    input: {
      type: 'object',
      additionalProperties: false,
      required: ['order_id', 'amount', 'reason'],
      properties: { order_id: orderId, amount: refundAmount, reason: refundReason },
    },
    output: {
      type: 'object',
      additionalProperties: false,
      required: [
        'proposal_id',
        'expires_at',
        'effect',
        'order_id',
        'current_version',
        'amount',
        'reason',
        'refunded_before',
        'refunded_after',
        'refundable_before',
        'refundable_after',
      ],
      properties: {
        proposal_id: proposalIdSchema,
        expires_at: timestamp,
        effect: { type: 'string' },
        order_id: orderId,
        current_version: version,
        amount: refundAmount,
        reason: refundReason,
        refunded_before: money,
        refunded_after: money,
        refundable_before: money,
        refundable_after: money,
      },
    },
    retry: 'safe',
    timeoutMs: 3_000,
    rateLimit: { limit: 120, windowMs: 60_000, per: 'run' },
    cancel: 'none',
    maxResultBytes: 8_192,
  },
  commit: {
    name: 'commit_refund',
    version: 1,
    description:
      'Refund a previewed amount to the customer. Takes only the proposal_id from preview_refund.v1; the approved proposal is what runs. Money leaves the merchant and cannot be recalled.',
    output: {
      type: 'object',
      additionalProperties: false,
      required: [
        'refund_id',
        'order_id',
        'amount',
        'reason',
        'refunded_before',
        'refunded_after',
        'refundable_after',
        'previous_version',
        'new_version',
        'refunded_at',
      ],
      properties: {
        refund_id: refundId,
        order_id: orderId,
        amount: refundAmount,
        reason: refundReason,
        refunded_before: money,
        refunded_after: money,
        refundable_after: money,
        previous_version: version,
        new_version: version,
        refunded_at: timestamp,
      },
    },
    retry: 'idempotent',
    approval: 'refund',
    timeoutMs: 5_000,
    rateLimit: { limit: 30, windowMs: 60_000, per: 'tenant' },
    cancel: 'none',
    maxResultBytes: 4_096,
    external: true,
  },
});

export const previewRefund = refund.preview;
export const commitRefund = refund.commit;

type Preview = PreviewResultOf<typeof previewRefund>;

/** A committed refund of the service, reduced to the view; undefined when it has another shape. */
function committedView(b: Body): Body | undefined {
  const view = {
    refund_id: readString(b['refund_id']),
    order_id: readString(b['order_id']),
    amount: readMoney(b['amount']),
    reason: readReason(b['reason']),
    refunded_before: readMoney(b['refunded_before']),
    refunded_after: readMoney(b['refunded_after']),
    refundable_after: readMoney(b['refundable_after']),
    previous_version: readInteger(b['previous_version']),
    new_version: readInteger(b['new_version']),
    refunded_at: readString(b['refunded_at']),
  };
  return Object.values(view).some((v) => v === undefined) ? undefined : view;
}

/** A version conflict is answered by reading again and proposing anew: `next` names the preview. */
function withNextStep(error: ToolError): ToolError {
  if (error.code !== 'VERSION_CONFLICT') return error;
  return toolError('VERSION_CONFLICT', 'The order changed after the refund was proposed', {
    field: '/expected_version',
    next: previewRefund.address,
    details: error.details,
  });
}

/** Checks the candidate refund against the order as it is now; refusals name the argument at fault. */
function previewOf(args: ToolArgs<typeof previewRefund>, b: Body): Preview | undefined {
  const refunded = readMoney(b['refunded']);
  const refundable = readMoney(b['refundable']);
  const current = readInteger(b['version']);
  if (refunded === undefined || refundable === undefined || current === undefined) return undefined;
  if (args.amount.currency !== refundable.currency) {
    throw new ToolFailure(
      toolError('INVALID_ARGUMENT', `Order ${args.order_id} was paid in ${refundable.currency}; a refund is in the same currency`, {
        field: '/amount/currency',
      }),
    );
  }
  if (args.amount.minor > refundable.minor) {
    throw new ToolFailure(
      toolError('INVALID_ARGUMENT', `Order ${args.order_id} has ${moneyText(refundable)} left to refund`, {
        field: '/amount/minor',
        details: { refundable },
      }),
    );
  }
  const currency = refundable.currency;
  return {
    order_id: args.order_id,
    current_version: current,
    amount: args.amount,
    reason: args.reason,
    refunded_before: refunded,
    refunded_after: { minor: refunded.minor + args.amount.minor, currency },
    refundable_before: refundable,
    refundable_after: { minor: refundable.minor - args.amount.minor, currency },
  };
}

/** The refund preview and commit, bound to the refunds service. */
export function refundTools(refunds: RefundsClient): readonly ToolImplementation[] {
  const preview = implement(previewRefund, {
    async run(args, context) {
      return expectShape(await refunds.order(args.order_id, context), (b) => previewOf(args, b), false);
    },
    propose(args, result) {
      return {
        arguments: { order_id: args.order_id, amount: args.amount, reason: args.reason, expected_version: result.current_version },
        target: { type: 'order', id: result.order_id, version: result.current_version },
        effect:
          `Refund ${moneyText(result.amount)} of order ${result.order_id} to the customer (reason: ${result.reason}); ` +
          `refunded so far ${moneyText(result.refunded_before)} → ${moneyText(result.refunded_after)}.`,
        diff: {
          changes: [
            { field: 'refunded', before: result.refunded_before, after: result.refunded_after },
            { field: 'refundable', before: result.refundable_before, after: result.refundable_after },
          ],
          recipients: [],
          amount: result.amount,
          affectedRecords: 1,
          irreversible: [REFUND_IRREVERSIBLE],
        },
      };
    },
  });

  const commit = implement(commitRefund, {
    // The stored proposal's arguments: exactly what the approver saw, never anything the agent sent.
    async run(args, context) {
      if (context.idempotencyKey === null) throw new Error('a refund runs only under an idempotency key made by the executor');
      try {
        // The approved arguments as they are: the service checks their hash against the assertion's.
        return expectShape(await refunds.refund(args.order_id, args, context.idempotencyKey, context), committedView, true);
      } catch (failure) {
        if (isToolFailure(failure) && failure.error.code === 'VERSION_CONFLICT')
          throw new ToolFailure(withNextStep(failure.error), { cause: failure });
        throw failure;
      }
    },
    async status(key, context): Promise<StatusAnswer> {
      const answer = await refunds.operation(key, context);
      if (answer.status === 'succeeded') {
        const view = isBody(answer.response) ? committedView(answer.response) : undefined;
        if (view === undefined) throw new Error('the status query answered a refund of an unexpected shape');
        return { state: 'succeeded', result: view };
      }
      if (answer.status === 'failed') {
        // A stored failure is the answer for good: the same key always gets it again.
        const error = upstreamToolError({ error: answer.error }, 'the refund failed', { retryable: false });
        return { state: 'failed', error: withNextStep({ ...error, retryable: false }) };
      }
      return { state: 'unknown' };
    },
    resourceOf: (args) => `order:${args.order_id}`,
  });
  return [preview, commit];
}
