import { defineToolPack } from '@gatehouse/sdk';
import { httpUrl } from './http-url.js';
import { RefundsClient } from './refunds-client.js';
import { getOrderRefundsTool } from './tools/get-order-refunds.js';
import { refundTools } from './tools/refund.js';

/** What the handlers of this pack need: the refunds service, as one HTTP client. */
export interface RefundsDeps {
  readonly refunds: RefundsClient;
  /** The audience the refunds service checks on every call assertion. */
  readonly audience: string;
}

/**
 * Refunds of orders as a tool pack, written against @gatehouse/sdk only: a read, and a refund
 * previewed, approved by a person (a refunds lead; finance above 500.00) and committed once.
 */
export const refundsPack = defineToolPack({
  name: 'refunds',
  config: {
    REFUNDS_URL: {
      doc: 'Base URL of the refunds service, the system of record of orders and their refunds.',
      default: 'http://127.0.0.1:8094',
      parse: httpUrl,
    },
    REFUNDS_AUDIENCE: {
      doc: 'The audience of the call assertions the tools present to the refunds service (the service checks it: REFUNDS_ASSERTION_AUDIENCE).',
      default: 'refunds',
    },
  },
  roles: new URL('../config/roles.json', import.meta.url),
  policyTable: new URL('../config/policy-table.json', import.meta.url),
  approvers: new URL('../config/approvers.json', import.meta.url),
  approverPolicy: new URL('../config/approver-policy.json', import.meta.url),
  setup: (config): RefundsDeps => ({ refunds: new RefundsClient(config.REFUNDS_URL), audience: config.REFUNDS_AUDIENCE }),
  credential: ({ audience }) => ({ audience }),
  tools: ({ refunds }) => [getOrderRefundsTool(refunds), ...refundTools(refunds)],
});
