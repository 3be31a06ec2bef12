import { describe, expect, it } from 'vitest';
import { Catalog, defineTool } from '@gatehouse/contracts';
import { readSpec } from './fixtures.js';

const x1 = defineTool(readSpec({ name: 'x', version: 1, retired: true }));
const x2 = defineTool(readSpec({ name: 'x', version: 2, description: 'Second version.' }));
const gone = defineTool(readSpec({ name: 'gone', version: 1, retired: true }));
const catalog = Catalog.load([x2, gone, x1]);

describe('Catalog.lookup', () => {
  it('holds several versions of a tool side by side', () => {
    expect(catalog.tools().map((t) => t.address)).toEqual(['gone.v1', 'x.v1', 'x.v2']);
    expect(catalog.get('x.v1')).toBe(x1);
    expect(catalog.get('x.v2')).toBe(x2);
    expect(catalog.get('x.v3')).toBeUndefined();
  });

  it('resolves each registered version and names the live one', () => {
    expect(catalog.lookup('x.v2')).toEqual({ ok: true, tool: x2, retired: false, live: 'x.v2' });
  });

  it('still resolves a retired version, marked retired, for runs that were granted it', () => {
    expect(catalog.lookup('x.v1')).toEqual({ ok: true, tool: x1, retired: true, live: 'x.v2' });
  });

  it('answers TOOL_NOT_FOUND naming the live version for an unknown version of a known name', () => {
    expect(catalog.lookup('x.v3')).toEqual({
      ok: false,
      error: { code: 'TOOL_NOT_FOUND', message: 'Tool x has no version 3', retryable: false, next: 'x.v2' },
    });
  });

  it('answers TOOL_NOT_FOUND without next for an unknown name', () => {
    const found = catalog.lookup('nope.v1');
    expect(found.ok).toBe(false);
    if (!found.ok) {
      expect(found.error.code).toBe('TOOL_NOT_FOUND');
      expect(found.error.retryable).toBe(false);
      expect(found.error).not.toHaveProperty('next');
    }
  });

  it('answers TOOL_NOT_FOUND for a malformed address, with next when the name is known', () => {
    for (const address of ['x', 'x.v01', 'x.V1', 'x.v0', 'x.v1.v2', 'X.v1', '', 'x.v1 ']) {
      const found = catalog.lookup(address);
      expect(found.ok, address).toBe(false);
      if (!found.ok) {
        expect(found.error.code, address).toBe('TOOL_NOT_FOUND');
        expect(found.error.message, address).toMatch(/malformed/);
      }
    }
    const bare = catalog.lookup('x');
    expect(!bare.ok && bare.error.next).toBe('x.v2');
  });

  it('builds TOOL_VERSION_RETIRED naming the live version', () => {
    expect(catalog.retiredError('x.v1')).toEqual({
      code: 'TOOL_VERSION_RETIRED',
      message: 'Tool x.v1 is retired; call x.v2',
      retryable: false,
      next: 'x.v2',
    });
  });

  it('reports no live version when every version of a name is retired', () => {
    expect(catalog.lookup('gone.v1')).toEqual({ ok: true, tool: gone, retired: true, live: null });
    expect(catalog.liveAddress('gone')).toBeNull();
    expect(catalog.retiredError('gone.v1')).not.toHaveProperty('next');
  });
});
