/**
 * The JSON Schema of an approvers file: the people who may decide on proposals, each by the SHA-256
 * of their bearer token, with the approver roles they hold and the tenants they see. The approval
 * service reads it; it is published as @gatehouse/sdk/schemas/approvers.schema.json for the packs
 * that ship one.
 */
export const APPROVERS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['approvers'],
  properties: {
    $schema: { type: 'string' },
    $comment: { type: 'string' },
    approvers: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['identity', 'token_sha256', 'roles', 'tenants'],
        properties: {
          identity: { type: 'string', minLength: 1, maxLength: 200 },
          token_sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          roles: { type: 'array', uniqueItems: true, items: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,63}$' } },
          tenants: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' } },
          demo: { type: 'boolean' },
          note: { type: 'string', maxLength: 500 },
        },
      },
    },
  },
} as const;
