import { describe, expect, it } from 'vitest';
import { isToolFailure, toolError, ToolFailure } from '@gatehouse/contracts';

/** What a second copy of this package (a tool pack loaded from its own path) throws: same shape, another class. */
class ForeignToolFailure extends Error {
  readonly error = toolError('VERSION_CONFLICT', 'changed');
  readonly ambiguous = false;

  constructor() {
    super('changed');
    this.name = 'ToolFailure';
  }
}

describe('isToolFailure', () => {
  it('recognises a ToolFailure of this package', () => {
    expect(isToolFailure(new ToolFailure(toolError('TIMEOUT', 'slow'), { ambiguous: true }))).toBe(true);
  });

  it('recognises a ToolFailure of another copy of the package by its shape', () => {
    const foreign = new ForeignToolFailure();
    expect(foreign instanceof ToolFailure).toBe(false);
    expect(isToolFailure(foreign)).toBe(true);
  });

  it('refuses plain errors, look-alikes with an unknown code and non-errors', () => {
    const unknownCode = Object.assign(new Error('x'), { name: 'ToolFailure', ambiguous: false, error: { code: 'NOPE', message: 'x' } });
    expect(isToolFailure(new Error('boom'))).toBe(false);
    expect(isToolFailure(unknownCode)).toBe(false);
    expect(isToolFailure({ name: 'ToolFailure', ambiguous: false, error: toolError('TIMEOUT', 'x') })).toBe(false);
    expect(isToolFailure(undefined)).toBe(false);
  });
});
