import type { JsonSchema } from '@gatehouse/testkit';

/** The `destination` union from the first seed, verbatim. */
export const addressChangeSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'destination'],
  properties: {
    customer_id: { type: 'string', minLength: 1 },
    destination: {
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['kind', 'address_id'],
          properties: {
            kind: { const: 'saved' },
            address_id: { type: 'string' },
          },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['kind', 'line1', 'city', 'country'],
          properties: {
            kind: { const: 'new' },
            line1: { type: 'string' },
            city: { type: 'string' },
            country: { type: 'string', pattern: '^[A-Z]{2}$' },
          },
        },
      ],
    },
  },
};

/** Money and quantities: integer minor units, exclusive and inclusive bounds, multipleOf. */
export const paymentSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['amount_minor', 'currency', 'quantity', 'discount_rate'],
  properties: {
    amount_minor: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    currency: { type: 'string', pattern: '^[A-Z]{3}$', examples: ['EUR'] },
    quantity: { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 100, multipleOf: 5 },
    discount_rate: { type: 'number', minimum: 0, maximum: 1 },
    fee_minor: { type: 'integer', minimum: -500, maximum: -1 },
    weight_kg: { type: 'number', exclusiveMinimum: 0, maximum: 1000, multipleOf: 0.5 },
    priority: { enum: ['low', 'normal', 'high'] },
    express: { type: 'boolean' },
  },
};

/** A bounded list call: required page size, optional cursor. */
export const listOrdersSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'status', 'page_size'],
  properties: {
    customer_id: { type: 'string', pattern: '^C-\\d{1,6}$' },
    status: { type: 'string', enum: ['open', 'shipped', 'cancelled'] },
    page_size: { type: 'integer', minimum: 1, maximum: 50 },
    cursor: { type: 'string', minLength: 1, maxLength: 200 },
  },
};

/** Arrays of closed objects inside arrays. */
const shipmentSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['parcels'],
  properties: {
    parcels: {
      type: 'array',
      minItems: 1,
      maxItems: 3,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['reference', 'lines'],
        properties: {
          reference: { type: 'string', pattern: '^P(?:-[a-z0-9_]{2,4})+$', maxLength: 12 },
          lines: {
            type: 'array',
            minItems: 1,
            maxItems: 5,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['sku', 'quantity'],
              properties: {
                sku: { type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' },
                quantity: { type: 'integer', minimum: 1, maximum: 99 },
                note: { type: ['string', 'null'], maxLength: 40 },
              },
            },
          },
          tags: { type: 'array', maxItems: 2, items: { type: 'string', enum: ['fragile', 'cold'] } },
        },
      },
    },
  },
};

/**
 * `$ref`/`$defs`, formats, and a union closed by `unevaluatedProperties` on the parent, with a
 * shared property outside the branches.
 */
const contactSchema: JsonSchema = {
  $defs: {
    email: { type: 'string', format: 'email', maxLength: 64 },
    person: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'email'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        email: { $ref: '#/$defs/email' },
        homepage: { type: 'string', format: 'uri' },
      },
    },
    channel: {
      type: 'object',
      required: ['kind', 'since'],
      properties: {
        kind: { type: 'string' },
        since: { type: 'string', format: 'date' },
      },
      unevaluatedProperties: false,
      oneOf: [
        { type: 'object', required: ['kind', 'address'], properties: { kind: { const: 'email' }, address: { $ref: '#/$defs/email' } } },
        {
          type: 'object',
          required: ['kind', 'number', 'at'],
          properties: {
            kind: { const: 'sms' },
            number: { type: 'string', pattern: '^\\+[1-9]\\d{6,14}$' },
            at: { type: 'string', format: 'date-time' },
          },
        },
      ],
    },
  },
  type: 'object',
  additionalProperties: false,
  required: ['owner', 'channel'],
  properties: {
    owner: { $ref: '#/$defs/person' },
    backup: { $ref: '#/$defs/person' },
    channel: { $ref: '#/$defs/channel' },
  },
};

export const ALL_SCHEMAS: ReadonlyArray<readonly [string, JsonSchema]> = [
  ['address change (seed destination union)', addressChangeSchema],
  ['payment (numeric bounds)', paymentSchema],
  ['list orders (page_size, cursor)', listOrdersSchema],
  ['shipment (nested arrays of closed objects)', shipmentSchema],
  ['contact ($ref, $defs, formats, unevaluatedProperties)', contactSchema],
];
