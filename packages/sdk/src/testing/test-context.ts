import type { ExecutionContext } from '@gatehouse/contracts';

/** The credential `testContext` hands out unless told otherwise: what a stand-in system of record can expect. */
export const TEST_CREDENTIAL = 'test-call-credential';

/**
 * An `ExecutionContext` as the executor hands it to a handler, for calling a handler in a unit test:
 * a read in tenant `acme` with no deadline, whose `credential()` resolves to `TEST_CREDENTIAL`.
 * Override what the test is about (`idempotencyKey` for a write, `signal` to abort, `tenant`, …).
 */
export function testContext(overrides: Partial<ExecutionContext> = {}): ExecutionContext {
  return {
    signal: new AbortController().signal,
    commandId: 'test-command',
    operationId: 'test-operation',
    runId: 'test-run',
    tenant: 'acme',
    principal: 'agent:test',
    environment: 'test',
    idempotencyKey: null,
    deadlineAt: null,
    credential: () => Promise.resolve(TEST_CREDENTIAL),
    ...overrides,
  };
}
