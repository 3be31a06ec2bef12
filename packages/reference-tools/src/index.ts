export { referenceCatalog, referenceImplementations } from './reference-catalog.js';
export { customersUrl } from './customers-api.js';
export { commitAddressChangeV1, commitAddressChangeV2, previewAddressChange } from './tools/address-change.js';
export type { AddressChangeArguments } from './tools/address-change.js';
export { previewCustomerEmail, sendCustomerEmail } from './tools/customer-email.js';
export { getCustomer } from './tools/get-customer.js';
export { listOpenOrdersForCustomer } from './tools/list-open-orders.js';
export { cancelOperation, getOperation, startCustomerExport } from './tools/operations.js';
