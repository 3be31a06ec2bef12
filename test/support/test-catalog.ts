import { Catalog } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import type { Roles } from '@gatehouse/policy';
import { customerSupportImplementations } from '@gatehouse/example-customer-support';

/** A catalog for one test file: the reference tools plus test-only tools, and a role that may call all of them. */
export interface TestCatalog {
  readonly catalog: Catalog;
  readonly implementations: readonly ToolImplementation[];
  readonly roles: Roles;
}

export const TEST_ROLE = 'ops-admin';

/**
 * Loads the reference contracts together with `extra` (each an `implement(defineTool(…), …)`), so the
 * executor runs the extra handlers exactly as it runs the reference ones.
 */
export function testCatalog(extra: readonly ToolImplementation[]): TestCatalog {
  const implementations = [...customerSupportImplementations, ...extra];
  const catalog = Catalog.load(implementations.map((i) => i.contract));
  const roles: Roles = {
    [TEST_ROLE]: {
      description: 'Every tool of the test catalog, for integration tests.',
      readOnly: false,
      tools: catalog.tools().map((t) => t.address),
    },
  };
  return { catalog, implementations, roles };
}
