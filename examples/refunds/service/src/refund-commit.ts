import { randomBytes } from 'node:crypto';
import type { PoolClient } from 'pg';
import { ServiceError } from './errors.js';
import { failure } from './idempotent-write.js';
import type { WriteResult } from './idempotent-write.js';
import type { Money } from './money.js';
import type { OrderRepository } from './order-repository.js';
import type { RefundReason } from './refund-reasons.js';

/** The body of `POST /orders/:id/refunds`, as its schema admits it. */
export interface RefundRequest {
  readonly expected_version: number;
  readonly amount: Money;
  readonly reason: RefundReason;
}

/** What a committed refund answers, and what the status query returns for its key. */
export interface RefundCommitted {
  readonly refund_id: string;
  readonly order_id: string;
  readonly amount: Money;
  readonly reason: RefundReason;
  readonly refunded_before: Money;
  readonly refunded_after: Money;
  readonly refundable_after: Money;
  readonly previous_version: number;
  readonly new_version: number;
  readonly refunded_at: string;
}

const newRefundId = (): string => `RF-${randomBytes(6).toString('hex').toUpperCase()}`;

/**
 * Inside the idempotent-write transaction: locks the order row, refuses a stale expected version
 * (VERSION_CONFLICT with current_version), another currency or more than the refundable balance,
 * else records the refund, adds it to the refunded total and bumps the version. Refusals are
 * business failures: stored under the key like a success.
 */
export async function commitRefund(
  db: PoolClient,
  orders: OrderRepository,
  tenant: string,
  orderId: string,
  request: RefundRequest,
  idempotencyKey: string,
): Promise<WriteResult> {
  const order = await orders.find(db, tenant, orderId, true);
  if (order === undefined) return failure(new ServiceError('NOT_FOUND', `order ${orderId} not found`, { field: 'order_id' }));
  if (order.version !== request.expected_version) {
    return failure(
      new ServiceError('VERSION_CONFLICT', `order ${orderId} is at version ${order.version}, not ${request.expected_version}`, {
        field: 'expected_version',
        current_version: order.version,
      }),
    );
  }
  if (request.amount.currency !== order.total.currency) {
    return failure(
      new ServiceError('CURRENCY_MISMATCH', `order ${orderId} is in ${order.total.currency}, not ${request.amount.currency}`, {
        field: 'amount.currency',
      }),
    );
  }
  if (request.amount.minor > order.refundable.minor) {
    return failure(
      new ServiceError('REFUND_EXCEEDS_BALANCE', `order ${orderId} has ${order.refundable.minor} minor units left to refund`, {
        field: 'amount.minor',
        refundable_minor: order.refundable.minor,
      }),
    );
  }
  const refundId = newRefundId();
  const applied = await orders.applyRefund(db, order, { refundId, amount: request.amount, reason: request.reason, idempotencyKey });
  const currency = order.total.currency;
  const after = order.refunded.minor + request.amount.minor;
  const body: RefundCommitted = {
    refund_id: refundId,
    order_id: order.order_id,
    amount: request.amount,
    reason: request.reason,
    refunded_before: order.refunded,
    refunded_after: { minor: after, currency },
    refundable_after: { minor: order.total.minor - after, currency },
    previous_version: order.version,
    new_version: applied.version,
    refunded_at: applied.refundedAt,
  };
  return { outcome: 'succeeded', httpStatus: 201, body };
}
