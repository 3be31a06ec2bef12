// The exports services and tests used before packs: kept working, unchanged, until the services load
// the pack (GATEHOUSE_TOOL_PACK). They read CUSTOMERS_URL from process.env on every call, as before,
// because tests set it after importing this module.
import { Catalog, readPackConfig, toolsOf } from '@gatehouse/sdk';
import type { ToolImplementation } from '@gatehouse/sdk';
import { customerSupportPack } from './customer-support-pack.js';
import { CustomersClient } from './customers-client.js';

/** Where the customers service listens: CUSTOMERS_URL of the current environment, or its default. */
export function customersUrl(): string {
  return readPackConfig(customerSupportPack, process.env).CUSTOMERS_URL;
}

/** Every reference tool with its handler, in catalog order; the customers URL is read per call. */
export const customerSupportImplementations: readonly ToolImplementation[] = toolsOf(customerSupportPack, {
  customers: new CustomersClient(customersUrl),
  audience: readPackConfig(customerSupportPack, process.env).CUSTOMERS_AUDIENCE,
});

/** The reference catalog, loaded (linted and compiled) once. */
export function customerSupportCatalog(): Catalog {
  return Catalog.load(customerSupportImplementations.map((i) => i.contract));
}
