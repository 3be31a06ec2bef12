import { defineToolPack } from '@gatehouse/sdk';
import { CustomersClient } from './customers-client.js';
import { addressChangeTools } from './tools/address-change.js';
import { customerEmailTools } from './tools/customer-email.js';
import { getCustomerTool } from './tools/get-customer.js';
import { listOpenOrdersTool } from './tools/list-open-orders.js';
import { operationTools } from './tools/operations.js';

/** CUSTOMERS_URL: an absolute http(s) URL, without trailing slashes. */
function httpUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('must be an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must be an http:// or https:// URL');
  return raw.replace(/\/+$/, '');
}

/** What the handlers of this pack need: the customers service, as one HTTP client. */
export interface CustomerSupportDeps {
  readonly customers: CustomersClient;
  /** The audience the customers service checks on every call assertion. */
  readonly audience: string;
}

/**
 * The reference domain as a tool pack: narrow, versioned tools over the customers system of record.
 * Roles, policy table, approvers and approver policy are the files in this package's config/.
 */
export const customerSupportPack = defineToolPack({
  name: 'customer-support',
  config: {
    CUSTOMERS_URL: {
      doc: 'Base URL of the customers service, the system of record the tools read and change.',
      default: 'http://127.0.0.1:8090',
      parse: httpUrl,
    },
    CUSTOMERS_AUDIENCE: {
      doc: 'The audience of the call assertions the tools present to the customers service (the service checks it: CUSTOMERS_ASSERTION_AUDIENCE).',
      default: 'customers',
    },
  },
  roles: new URL('../config/roles.json', import.meta.url),
  policyTable: new URL('../config/policy-table.json', import.meta.url),
  approvers: new URL('../config/approvers.json', import.meta.url),
  approverPolicy: new URL('../config/approver-policy.json', import.meta.url),
  setup: (config): CustomerSupportDeps => ({ customers: new CustomersClient(config.CUSTOMERS_URL), audience: config.CUSTOMERS_AUDIENCE }),
  // Every tool calls the customers service, so every call carries an assertion for it.
  credential: ({ audience }) => ({ audience }),
  tools: ({ customers }) => [
    getCustomerTool(customers),
    listOpenOrdersTool(customers),
    ...addressChangeTools(customers),
    ...customerEmailTools(customers),
    ...operationTools(customers),
  ],
});
