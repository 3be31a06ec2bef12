/** Schema fragments the refunds tools share. Every object is closed. */

export const orderId = {
  type: 'string',
  pattern: '^ORD-[0-9]{4,10}$',
  description: 'Order id, e.g. ORD-1001.',
} as const;

const currency = { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code.' } as const;

/** An amount the order holds (a total, a balance): integer minor units, zero allowed. */
export const money = {
  type: 'object',
  additionalProperties: false,
  required: ['minor', 'currency'],
  properties: {
    minor: { type: 'integer', minimum: 0, maximum: 1_000_000_000_000, description: 'Amount in integer minor units (cents).' },
    currency,
  },
} as const;

/** An amount to refund: integer minor units, at least one, at most 1,000,000.00. */
export const refundAmount = {
  type: 'object',
  additionalProperties: false,
  required: ['minor', 'currency'],
  properties: {
    minor: {
      type: 'integer',
      minimum: 1,
      maximum: 100_000_000,
      description: 'Amount to refund in integer minor units (cents): 2500 is 25.00.',
    },
    currency,
  },
} as const;

/** Why money goes back: a closed set. */
export const REFUND_REASONS = ['customer_request', 'damaged', 'not_delivered', 'duplicate_charge', 'goodwill'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

export const refundReason = { type: 'string', enum: REFUND_REASONS, description: 'Why the money goes back.' } as const;

export const refundId = { type: 'string', pattern: '^RF-[0-9A-F]{12}$', description: 'Refund id, e.g. RF-0A1B2C3D4E5F.' } as const;

export const version = { type: 'integer', minimum: 1 } as const;

export const timestamp = { type: 'string', format: 'date-time' } as const;
