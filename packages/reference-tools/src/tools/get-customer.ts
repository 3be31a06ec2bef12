import { defineTool, implement } from '@gatehouse/contracts';
import { callCustomers, expectShape } from '../customers-api.js';
import { address, customerId, savedAddress, timestamp } from '../schema-parts.js';

export const getCustomer = defineTool({
  name: 'get_customer',
  version: 1,
  description: 'Read one customer of the tenant: contact details, shipping address, saved addresses and the record version. Use before proposing a change.',
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

type Address = { line1: string; city: string; country: string; postal_code: string | null };
type Saved = Address & { address_id: string };

const pickAddress = (a: Address): Address => ({ line1: a.line1, city: a.city, country: a.country, postal_code: a.postal_code });

export const getCustomerTool = implement(getCustomer, {
  async run(args, context) {
    const { body } = await callCustomers({ method: 'GET', path: `/customers/${encodeURIComponent(args.customer_id)}`, context });
    // The service returns internal_notes and credit_score to trusted callers; only the view leaves.
    return expectShape(
      body,
      (b) =>
        typeof b['id'] === 'string'
          ? {
              customer_id: b['id'],
              name: b['name'],
              email: b['email'],
              shipping_address: pickAddress(b['shipping_address'] as Address),
              saved_addresses: (b['saved_addresses'] as Saved[]).map((s) => ({ address_id: s.address_id, ...pickAddress(s) })),
              version: b['version'],
              updated_at: b['updated_at'],
            }
          : undefined,
      false,
    );
  },
});
