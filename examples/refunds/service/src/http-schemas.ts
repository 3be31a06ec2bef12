/** JSON Schemas of request bodies and path parameters, compiled once by fastify's Ajv. Every object is closed. */
import { REFUND_REASONS } from './refund-reasons.js';

const ORDER_ID_PATTERN = '^ORD-[0-9]{4,10}$';

export const orderParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: { type: 'string', pattern: ORDER_ID_PATTERN } },
} as const;

export const keyParams = {
  type: 'object',
  additionalProperties: false,
  required: ['key'],
  properties: { key: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

export const refundBody = {
  type: 'object',
  additionalProperties: false,
  required: ['order_id', 'expected_version', 'amount', 'reason'],
  properties: {
    order_id: { type: 'string', pattern: ORDER_ID_PATTERN },
    expected_version: { type: 'integer', minimum: 1 },
    amount: {
      type: 'object',
      additionalProperties: false,
      required: ['minor', 'currency'],
      properties: {
        minor: { type: 'integer', minimum: 1, maximum: 1_000_000_000_000 },
        currency: { type: 'string', pattern: '^[A-Z]{3}$' },
      },
    },
    reason: { type: 'string', enum: REFUND_REASONS },
  },
} as const;
