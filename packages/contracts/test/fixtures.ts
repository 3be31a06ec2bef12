// Tool contracts shared by the tests: the seeds' address-change flow and a list.
import { defineTool } from '@gatehouse/contracts';
import type { ToolSpec } from '@gatehouse/contracts';

export const destination = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'address_id'],
      properties: { kind: { const: 'saved' }, address_id: { type: 'string' } },
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
} as const;

const customerView = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'name', 'version'],
  properties: {
    customer_id: { type: 'string' },
    name: { type: 'string' },
    email: { type: 'string', format: 'email' },
    version: { type: 'integer', minimum: 1 },
  },
} as const;

export const getCustomer = defineTool({
  name: 'get_customer',
  version: 1,
  description: 'Read one customer by id.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['customer_id'],
    properties: { customer_id: { type: 'string', minLength: 1 }, include_email: { type: 'boolean' } },
  },
  output: customerView,
  effect: 'read',
  retry: 'safe',
  timeoutMs: 2000,
  cancel: 'none',
  maxResultBytes: 4096,
});

export const previewAddressChange = defineTool({
  name: 'preview_address_change',
  version: 2,
  description: 'Compute the proposal for changing a shipping address.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['customer_id', 'destination'],
    properties: { customer_id: { type: 'string', minLength: 1 }, destination },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['proposal_id', 'expires_at'],
    properties: { proposal_id: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } },
  },
  effect: 'read',
  retry: 'safe',
  timeoutMs: 3000,
  cancel: 'none',
  maxResultBytes: 8192,
  commits: 'commit_address_change.v2',
});

export const commitAddressChange = defineTool({
  name: 'commit_address_change',
  version: 2,
  description: 'Commit an approved address-change proposal.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['proposal_id'],
    properties: { proposal_id: { type: 'string', minLength: 1 } },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['customer_id', 'previous_version', 'new_version', 'changed_fields', 'committed_at'],
    properties: {
      customer_id: { type: 'string' },
      previous_version: { type: 'integer' },
      new_version: { type: 'integer' },
      changed_fields: { type: 'array', items: { type: 'string' } },
      committed_at: { type: 'string', format: 'date-time' },
    },
  },
  effect: 'write',
  retry: 'idempotent',
  approval: 'address_change',
  timeoutMs: 5000,
  cancel: 'none',
  maxResultBytes: 4096,
  previewedBy: 'preview_address_change.v2',
});

export const listCustomers = defineTool({
  name: 'list_customers',
  version: 1,
  description: 'List customers, one bounded page at a time.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['page_size'],
    properties: {
      page_size: { type: 'integer', minimum: 1, maximum: 50 },
      cursor: { type: 'string' },
    },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['items'],
    properties: { items: { type: 'array', items: customerView }, cursor: { type: 'string' } },
  },
  effect: 'read',
  retry: 'safe',
  timeoutMs: 2000,
  cancel: 'none',
  maxResultBytes: 65536,
  pagination: { maxPageSize: 50 },
});

export const flowTools = [getCustomer, previewAddressChange, commitAddressChange, listCustomers] as const;

/** A valid read contract to derive broken variants from in tests. */
export function readSpec(overrides: Partial<ToolSpec> = {}): ToolSpec {
  return {
    name: 'probe',
    version: 1,
    description: 'A probe tool.',
    input: { type: 'object', additionalProperties: false, properties: { q: { type: 'string' } } },
    output: { type: 'object', additionalProperties: false, properties: { ok: { type: 'boolean' } } },
    effect: 'read',
    retry: 'safe',
    timeoutMs: 1000,
    cancel: 'none',
    maxResultBytes: 1024,
    ...overrides,
  };
}
