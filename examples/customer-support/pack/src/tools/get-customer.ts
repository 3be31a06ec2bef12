import { defineTool, implement } from '@gatehouse/sdk';
import type { ToolImplementation } from '@gatehouse/sdk';
import type { CustomersClient } from '../customers-client.js';
import { address, customerId, savedAddress, timestamp } from '../schema-parts.js';
import { expectShape, pick } from '../upstream-body.js';

export const getCustomer = defineTool({
  name: 'get_customer',
  version: 1,
  description:
    'Read one customer of the tenant: contact details, shipping address, saved addresses and the record version. Use before proposing a change.',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['customer_id'],
    properties: { customer_id: customerId },
  },
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['customer_id', 'name', 'email', 'shipping_address', 'saved_addresses', 'version', 'updated_at'],
    properties: {
      customer_id: customerId,
      name: { type: 'string' },
      email: { type: 'string' },
      shipping_address: address,
      saved_addresses: { type: 'array', maxItems: 50, items: savedAddress },
      version: { type: 'integer', minimum: 1 },
      updated_at: timestamp,
    },
  },
  effect: 'read',
  retry: 'safe',
  timeoutMs: 2_000,
  rateLimit: { limit: 600, windowMs: 60_000, per: 'run' },
  cancel: 'none',
  maxResultBytes: 16_384,
} as const);

const ADDRESS_FIELDS = ['line1', 'city', 'country', 'postal_code'] as const;
const SAVED_FIELDS = ['address_id', ...ADDRESS_FIELDS] as const;

export function getCustomerTool(customers: CustomersClient): ToolImplementation {
  return implement(getCustomer, {
    async run(args, context) {
      const { body } = await customers.call({ method: 'GET', path: `/customers/${encodeURIComponent(args.customer_id)}`, context });
      // The service returns internal_notes and credit_score to trusted callers; only the view leaves.
      return expectShape(
        body,
        (b) => {
          const saved = b['saved_addresses'];
          return typeof b['id'] === 'string' && Array.isArray(saved)
            ? {
                customer_id: b['id'],
                name: b['name'],
                email: b['email'],
                shipping_address: pick(b['shipping_address'], ADDRESS_FIELDS),
                saved_addresses: saved.map((s: unknown) => pick(s, SAVED_FIELDS)),
                version: b['version'],
                updated_at: b['updated_at'],
              }
            : undefined;
        },
        false,
      );
    },
  });
}
