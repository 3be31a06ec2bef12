import { fileURLToPath } from 'node:url';
import { customerSupportPack } from '@gatehouse/example-customer-support';

// The reference pack's own documents, which the services load when they host it.
export const REFERENCE_ROLES_FILE = fileURLToPath(customerSupportPack.roles);
export const REFERENCE_POLICY_TABLE_FILE = fileURLToPath(customerSupportPack.policyTable);
