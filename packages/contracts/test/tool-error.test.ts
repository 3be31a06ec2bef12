import { describe, expect, it } from 'vitest';
import { ContractError, toolError } from '@gatehouse/contracts';

describe('toolError', () => {
  it('takes retryable from the catalogue', () => {
    expect(toolError('RATE_LIMITED', 'slow down', { retryAfterMs: 250 })).toEqual({
      code: 'RATE_LIMITED',
      message: 'slow down',
      retryable: true,
      retryAfterMs: 250,
    });
    expect(toolError('VERSION_CONFLICT', 'changed').retryable).toBe(false);
  });

  it('lets one error override the default retryable', () => {
    expect(toolError('TIMEOUT', 'write timed out', { retryable: false }).retryable).toBe(false);
  });

  it('leaves absent extras out of the object instead of setting them undefined', () => {
    const error = toolError('CAPABILITY_DENIED', 'not granted', { permitted: ['get_customer.v1'], next: undefined });
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'permitted', 'retryable']);
  });
});

describe('ContractError', () => {
  it('carries the code, every problem and retryable false', () => {
    const error = new ContractError(['a.v1 /input: one', 'b.v1 /output: two']);
    expect(error.code).toBe('CATALOG_INVALID');
    expect(error.retryable).toBe(false);
    expect(error.problems).toEqual(['a.v1 /input: one', 'b.v1 /output: two']);
    expect(error.message).toContain('2 problems');
    expect(error.message).toContain('- b.v1 /output: two');
  });
});
