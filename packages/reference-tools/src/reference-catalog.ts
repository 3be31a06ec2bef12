import { Catalog } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import { commitAddressChangeV1Tool, commitAddressChangeV2Tool, previewAddressChangeTool } from './tools/address-change.js';
import { previewCustomerEmailTool, sendCustomerEmailTool } from './tools/customer-email.js';
import { getCustomerTool } from './tools/get-customer.js';
import { listOpenOrdersTool } from './tools/list-open-orders.js';
import { cancelOperationTool, getOperationTool, startCustomerExportTool } from './tools/operations.js';

/** Every reference tool with its handler, in catalog order. */
export const referenceImplementations: readonly ToolImplementation[] = [
  getCustomerTool,
  listOpenOrdersTool,
  previewAddressChangeTool,
  commitAddressChangeV1Tool,
  commitAddressChangeV2Tool,
  previewCustomerEmailTool,
  sendCustomerEmailTool,
  startCustomerExportTool,
  getOperationTool,
  cancelOperationTool,
] as readonly ToolImplementation[];

/** The reference catalog, loaded (linted and compiled) once. */
export function referenceCatalog(): Catalog {
  return Catalog.load(referenceImplementations.map((i) => i.contract));
}
