import { PolicyTable } from '@gatehouse/governance';
import type { Catalog } from '@gatehouse/contracts';
import { readFileSync } from 'node:fs';
import { REFERENCE_POLICY_TABLE_FILE } from './reference-pack.js';

/**
 * The reference policy table with address changes and emails allowed in the sandbox: for tests of
 * the executor's write semantics that need no person in the loop. Approval itself is tested elsewhere.
 */
export function sandboxAllowsWrites(catalog: Catalog): PolicyTable {
  const document = JSON.parse(readFileSync(REFERENCE_POLICY_TABLE_FILE, 'utf8')) as { rules: unknown[] };
  return PolicyTable.parse(
    {
      rules: [
        {
          id: 'sandbox-writes-allow',
          description: 'Test only: sandbox address changes and emails run without approval.',
          match: { effect: 'write', environments: ['sandbox'], approvalRules: ['address-change', 'customer-email'] },
          decision: { kind: 'allow' },
        },
        ...document.rules,
      ],
    },
    catalog.tools(),
  );
}
