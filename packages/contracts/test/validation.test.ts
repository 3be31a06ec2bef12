import { describe, expect, it } from 'vitest';
import { Catalog, defineTool } from '@gatehouse/contracts';
import type { JSONSchema, ToolContract, ToolError } from '@gatehouse/contracts';
import { commitAddressChange, destination, flowTools, getCustomer, listCustomers, previewAddressChange, readSpec } from './fixtures.js';

const catalog = Catalog.load(flowTools);
const saved = { kind: 'saved', address_id: 'A-77' };
const fresh = { kind: 'new', line1: '1 Main St', city: 'Leeds', country: 'GB' };

function invalid(args: unknown): ToolError {
  const checked = catalog.validateInput(previewAddressChange, args);
  if (checked.ok) return expect.fail('arguments were accepted');
  expect(checked.error.code).toBe('INVALID_ARGUMENT');
  expect(checked.error.retryable).toBe(false);
  return checked.error;
}

const fields = (error: ToolError): unknown => (error.details as { field: string }[]).map((d) => d.field);

describe('validateInput', () => {
  it('accepts both branches of the destination union and returns the value untouched', () => {
    for (const destination of [saved, fresh]) {
      const args = { customer_id: 'C-1842', destination };
      expect(catalog.validateInput(previewAddressChange, args)).toEqual({ ok: true, value: args });
    }
  });

  it('rejects an unknown field at the root and points at it', () => {
    const error = invalid({ customer_id: 'C-1842', destination: saved, nickname: 'Home-Sweet-Home' });
    expect(error.field).toBe('/nickname');
    expect(error.details).toEqual([{ field: '/nickname', keyword: 'additionalProperties', message: 'is not allowed: unknown field' }]);
  });

  it('rejects an unknown field inside the chosen branch and points at it', () => {
    const error = invalid({ customer_id: 'C-1842', destination: { ...fresh, nickname: 'Cottage-9' } });
    expect(error.field).toBe('/destination/nickname');
    expect(fields(error)).toEqual(['/destination/nickname']);
  });

  it('points at a missing required property', () => {
    expect(invalid({ destination: saved }).field).toBe('/customer_id');
    const error = invalid({ customer_id: 'C-1842', destination: { kind: 'new', line1: '1 Main St', country: 'GB' } });
    expect(error.field).toBe('/destination/city');
    expect(error.details).toEqual([{ field: '/destination/city', keyword: 'required', message: 'is required' }]);
  });

  it('points at a country that breaks its pattern', () => {
    const error = invalid({ customer_id: 'C-1842', destination: { ...fresh, country: 'gb' } });
    expect(error.field).toBe('/destination/country');
    expect(error.details).toEqual([{ field: '/destination/country', keyword: 'pattern', message: 'must match pattern "^[A-Z]{2}$"' }]);
  });

  it('points at the discriminator when no branch has that kind, or it is missing', () => {
    const wrong = invalid({ customer_id: 'C-1842', destination: { kind: 'moved-away', address_id: 'A-77' } });
    expect(wrong.field).toBe('/destination/kind');
    expect(wrong.details).toEqual([{ field: '/destination/kind', keyword: 'oneOf', message: 'must be one of "saved", "new"' }]);
    expect(invalid({ customer_id: 'C-1842', destination: { address_id: 'A-77' } }).field).toBe('/destination/kind');
  });

  // Documented behaviour: `kind` chooses the branch, and every field of the other branch is then
  // reported as an unknown field of the chosen one, in the order the value lists them.
  it('reports the fields of the other branch as unknown when both branches are mixed', () => {
    const asSaved = invalid({ customer_id: 'C-1842', destination: { ...saved, line1: '1 Main St', city: 'Leeds', country: 'GB' } });
    expect(asSaved.field).toBe('/destination/line1');
    expect(fields(asSaved)).toEqual(['/destination/line1', '/destination/city', '/destination/country']);
    const asNew = invalid({ customer_id: 'C-1842', destination: { ...fresh, address_id: 'A-77' } });
    expect(fields(asNew)).toEqual(['/destination/address_id']);
  });

  it('lists every failure in details and reports the first as field', () => {
    const error = invalid({ destination: { ...fresh, country: 'gb', floor: 3 }, extra: true });
    expect(new Set(fields(error) as string[])).toEqual(new Set(['/customer_id', '/extra', '/destination/country', '/destination/floor']));
    expect(error.field).toBe((error.details as { field: string }[])[0]?.field);
    expect(error.message).toMatch(/^Arguments of preview_address_change\.v2 invalid: .* \(3 more in details\)$/);
  });

  it('never echoes the offending values in messages or details', () => {
    const secrets = ['Home-Sweet-Home', 'moved-away', 'gb', 'SECRET-7731'];
    const errors = [
      invalid({ customer_id: 'C-1842', destination: saved, nickname: 'Home-Sweet-Home' }),
      invalid({ customer_id: 'C-1842', destination: { kind: 'moved-away', address_id: 'A-77' } }),
      invalid({ customer_id: 'C-1842', destination: { ...fresh, country: 'gb' } }),
      invalid({ customer_id: 'C-1842', destination: { ...fresh, city: { nested: 'SECRET-7731' } } }),
      invalid({ customer_id: 12, destination: 'SECRET-7731' }),
    ];
    for (const error of errors) {
      const text = JSON.stringify(error);
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
  });

  it('reports a value that is not an object where the union expects one', () => {
    const error = invalid({ customer_id: 'C-1842', destination: 'SECRET-7731' });
    expect(error.field).toBe('/destination');
  });

  it('narrows a nullable union to the branch whose type fits', () => {
    const tool = defineTool(
      readSpec({
        name: 'nullable_probe',
        input: {
          type: 'object',
          additionalProperties: false,
          properties: {
            at: {
              anyOf: [
                { type: 'object', additionalProperties: false, properties: { day: { type: 'string', format: 'date' } } },
                { type: 'null' },
              ],
            },
          },
        },
      }),
    );
    const probeCatalog = Catalog.load([tool]);
    expect(probeCatalog.validateInput(tool, { at: null }).ok).toBe(true);
    const checked = probeCatalog.validateInput(tool, { at: { day: '2026-13-45' } });
    expect(!checked.ok && checked.error.details).toEqual([{ field: '/at/day', keyword: 'format', message: 'must match format "date"' }]);
  });

  it('narrows a union whose branches are local $refs the same way', () => {
    const [savedBranch, freshBranch] = destination.oneOf;
    const tool = defineTool(
      readSpec({
        name: 'ref_probe',
        input: {
          type: 'object',
          additionalProperties: false,
          required: ['destination'],
          $defs: { saved: savedBranch, fresh: freshBranch },
          properties: { destination: { oneOf: [{ $ref: '#/$defs/saved' }, { $ref: '#/$defs/fresh' }] } },
        } as JSONSchema, // json-schema-to-ts's JSONSchema type predates $defs
      }),
    );
    const refCatalog = Catalog.load([tool]);
    const checked = refCatalog.validateInput(tool, { destination: { ...fresh, country: 'gb', address_id: 'A-77' } });
    expect(!checked.ok && checked.error.details).toEqual([
      { field: '/destination/address_id', keyword: 'additionalProperties', message: 'is not allowed: unknown field' },
      { field: '/destination/country', keyword: 'pattern', message: 'must match pattern "^[A-Z]{2}$"' },
    ]);
  });

  it('enforces bounds of a list page size', () => {
    expect(catalog.validateInput(listCustomers, { page_size: 50 }).ok).toBe(true);
    const checked = catalog.validateInput(listCustomers, { page_size: 51 });
    expect(!checked.ok && checked.error.field).toBe('/page_size');
  });

  it('refuses to validate against a tool that is not loaded in the catalog', () => {
    const stranger: ToolContract = defineTool(readSpec({ name: 'stranger' }));
    expect(() => catalog.validateInput(stranger, {})).toThrow(/not loaded/);
  });
});

describe('validateOutput', () => {
  it('accepts a result inside the output schema', () => {
    const result = { customer_id: 'C-1842', name: 'Ada', version: 17 };
    expect(catalog.validateOutput(getCustomer, result)).toEqual({ ok: true, value: result });
  });

  it('treats a field outside the output schema as a violation, never dropping it silently', () => {
    const checked = catalog.validateOutput(getCustomer, { customer_id: 'C-1842', name: 'Ada', version: 17, credit_score: 812 });
    expect(checked.ok).toBe(false);
    if (!checked.ok) {
      expect(checked.error).toMatchObject({ code: 'OUTPUT_INVALID', retryable: false, field: '/credit_score' });
      expect(JSON.stringify(checked.error)).not.toContain('812');
    }
  });

  it('points into nested results', () => {
    const checked = catalog.validateOutput(commitAddressChange, {
      customer_id: 'C-1842',
      previous_version: 17,
      new_version: 18,
      changed_fields: ['shipping_address', 7],
      committed_at: '2026-08-14T16:22:11Z',
    });
    expect(!checked.ok && checked.error.field).toBe('/changed_fields/1');
  });
});
