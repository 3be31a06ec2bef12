import { defineTool, implement } from '@gatehouse/sdk';
import type { ToolImplementation } from '@gatehouse/sdk';
import type { RefundsClient } from '../refunds-client.js';
import { money, orderId, refundId, refundReason, timestamp, version } from '../schema-parts.js';
import { expectShape, isBody, readInteger, readMoney, readReason, readString } from '../upstream-body.js';
import type { Body } from '../upstream-body.js';

/** At most this many refunds are shown with an order, newest first (the service lists no more). */
const MAX_REFUNDS = 50;

export const getOrderRefunds = defineTool({
  name: 'get_order_refunds',
  version: 1,
  description:
    'Read one order of the tenant with its refunds: the total, what was refunded so far, the refundable balance and the record version. Use before previewing a refund.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['order_id'],
    properties: { order_id: orderId },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['order_id', 'total', 'refunded', 'refundable', 'version', 'updated_at', 'refunds'],
    properties: {
      order_id: orderId,
      total: money,
      refunded: money,
      refundable: money,
      version,
      updated_at: timestamp,
      refunds: {
        type: 'array',
        maxItems: MAX_REFUNDS,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['refund_id', 'amount', 'reason', 'refunded_at'],
          properties: { refund_id: refundId, amount: money, reason: refundReason, refunded_at: timestamp },
        },
      },
    },
  },
  effect: 'read',
  retry: 'safe',
  timeoutMs: 2_000,
  rateLimit: { limit: 600, windowMs: 60_000, per: 'run' },
  cancel: 'none',
  maxResultBytes: 16_384,
} as const);

/** One refund of the service, reduced to the view; undefined when it has another shape. */
function refundOf(value: unknown): Body | undefined {
  if (!isBody(value)) return undefined;
  const id = readString(value['refund_id']);
  const amount = readMoney(value['amount']);
  const reason = readReason(value['reason']);
  const at = readString(value['refunded_at']);
  return id === undefined || amount === undefined || reason === undefined || at === undefined
    ? undefined
    : { refund_id: id, amount, reason, refunded_at: at };
}

/**
 * The order as the model may see it. The service also returns `customer_ref` and
 * `payment_reference` to trusted callers; they never enter the view.
 */
function orderView(b: Body): Body | undefined {
  const refunds = Array.isArray(b['refunds']) ? b['refunds'].slice(0, MAX_REFUNDS).map(refundOf) : undefined;
  const id = readString(b['order_id']);
  const total = readMoney(b['total']);
  const refunded = readMoney(b['refunded']);
  const refundable = readMoney(b['refundable']);
  const current = readInteger(b['version']);
  const updatedAt = readString(b['updated_at']);
  if (
    id === undefined ||
    total === undefined ||
    refunded === undefined ||
    refundable === undefined ||
    current === undefined ||
    updatedAt === undefined
  )
    return undefined;
  if (refunds === undefined || refunds.some((r) => r === undefined)) return undefined;
  return { order_id: id, total, refunded, refundable, version: current, updated_at: updatedAt, refunds };
}

export function getOrderRefundsTool(refunds: RefundsClient): ToolImplementation {
  return implement(getOrderRefunds, {
    async run(args, context) {
      return expectShape(await refunds.order(args.order_id, context), orderView, false);
    },
  });
}
