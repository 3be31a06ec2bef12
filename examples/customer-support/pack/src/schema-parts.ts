/** Schema fragments the reference tools share. Every object is closed; unions are discriminated by `kind`. */

export const customerId = {
  type: 'string',
  pattern: '^C-[0-9]{1,10}$',
  description: 'Customer id, e.g. C-1842.',
} as const;

const countryCode = { type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 code.' } as const;

export const address = {
  type: 'object',
  additionalProperties: false,
  required: ['line1', 'city', 'country', 'postal_code'],
  properties: {
    line1: { type: 'string', minLength: 1, maxLength: 200 },
    city: { type: 'string', minLength: 1, maxLength: 100 },
    country: countryCode,
    postal_code: { type: ['string', 'null'], maxLength: 20 },
  },
} as const;

export const savedAddress = {
  type: 'object',
  additionalProperties: false,
  required: ['address_id', 'line1', 'city', 'country', 'postal_code'],
  properties: {
    address_id: { type: 'string', minLength: 1, maxLength: 64 },
    line1: { type: 'string', minLength: 1, maxLength: 200 },
    city: { type: 'string', minLength: 1, maxLength: 100 },
    country: countryCode,
    postal_code: { type: ['string', 'null'], maxLength: 20 },
  },
} as const;

/** The seeds' destination: a saved address by id, or a new one. Never twelve optional fields. */
export const destination = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'address_id'],
      properties: {
        kind: { const: 'saved' },
        address_id: { type: 'string', minLength: 1, maxLength: 64 },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'line1', 'city', 'country'],
      properties: {
        kind: { const: 'new' },
        line1: { type: 'string', minLength: 1, maxLength: 200 },
        city: { type: 'string', minLength: 1, maxLength: 100 },
        country: countryCode,
        postal_code: { type: 'string', minLength: 1, maxLength: 20 },
      },
    },
  ],
} as const;

export const money = {
  type: 'object',
  additionalProperties: false,
  required: ['minor', 'currency'],
  properties: {
    minor: { type: 'integer', description: 'Amount in integer minor units.' },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  },
} as const;

export const timestamp = { type: 'string', format: 'date-time' } as const;

export const operationId = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Id of a long-running operation.' } as const;
