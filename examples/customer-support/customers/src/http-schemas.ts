/** JSON Schemas of request bodies and path parameters, compiled once by fastify's Ajv. Every object is closed. */

const ID = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } as const;
const TEXT = { type: 'string', minLength: 1, maxLength: 200 } as const;

export const idParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: ID },
} as const;

export const keyParams = {
  type: 'object',
  additionalProperties: false,
  required: ['key'],
  properties: { key: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

const destination = {
  type: 'object',
  discriminator: { propertyName: 'kind' },
  required: ['kind'],
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'address_id'],
      properties: { kind: { const: 'saved' }, address_id: ID },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'line1', 'city', 'country'],
      properties: {
        kind: { const: 'new' },
        line1: TEXT,
        city: TEXT,
        country: { type: 'string', pattern: '^[A-Z]{2}$' },
        postal_code: { type: 'string', minLength: 1, maxLength: 20 },
      },
    },
  ],
} as const;

export const previewBody = {
  type: 'object',
  additionalProperties: false,
  required: ['destination'],
  properties: { destination },
} as const;

// A write's body is the approved arguments as they are (its call assertion names their hash), so it
// names its target too: the route refuses a body whose target is not the one in the path.
export const commitBody = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'expected_version', 'destination'],
  properties: { customer_id: ID, expected_version: { type: 'integer', minimum: 1 }, destination },
} as const;

export const emailBody = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'subject', 'body'],
  properties: {
    customer_id: ID,
    subject: TEXT,
    body: { type: 'string', minLength: 1, maxLength: 20_000 },
    template: { type: 'string', pattern: '^[a-z0-9_-]{1,64}$' },
  },
} as const;

export const exportBody = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'format'],
  properties: { customer_id: ID, format: { enum: ['csv', 'json'] } },
} as const;

export const cancelBody = {
  type: 'object',
  additionalProperties: false,
  required: ['operation_id'],
  properties: { operation_id: ID },
} as const;

export const faultsBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    statusDown: { type: 'boolean' },
    /** Faults for the next writes, in arrival order: drop-after-commit, malformed-success, unavailable, delay:<ms>. */
    nextWrites: {
      type: 'array',
      maxItems: 1000,
      items: { type: 'string', pattern: '^(drop-after-commit|malformed-success|unavailable|delay:[0-9]{1,6})$' },
    },
    /** A delay every write takes before its handler, for concurrency tests. */
    writeDelayMs: { type: 'integer', minimum: 0, maximum: 60000 },
  },
} as const;
