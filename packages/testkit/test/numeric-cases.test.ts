import { boundaryValidCases, invalidCases } from '@gatehouse/testkit';
import { describe, expect, it } from 'vitest';
import { listOrdersSchema, paymentSchema } from './schemas.js';

const valueAt = (value: unknown, key: string): unknown => (value as Record<string, unknown>)[key];

describe('numeric cases', () => {
  it('accepts page_size at 1 and 50 and rejects 0, 51, 1.5 and "1"', () => {
    const valid = boundaryValidCases(listOrdersSchema).filter((c) => c.name.startsWith('/page_size:'));
    expect(valid.map((c) => valueAt(c.value, 'page_size'))).toEqual([1, 50]);
    const invalid = invalidCases(listOrdersSchema).filter((c) => c.field === '/page_size' && c.keyword !== 'required');
    expect(invalid.map((c) => [c.keyword, valueAt(c.value, 'page_size')])).toEqual([
      ['type', '1'],
      ['minimum', 0],
      ['maximum', 51],
      ['type', 1.5],
    ]);
  });

  it('uses the exclusive bound itself as the invalid value and the nearest multiple inside as the valid one', () => {
    const invalid = invalidCases(paymentSchema).filter((c) => c.field === '/quantity');
    expect(invalid.map((c) => [c.keyword, valueAt(c.value, 'quantity')])).toEqual([
      ['required', undefined],
      ['type', '5'],
      ['exclusiveMinimum', 0],
      ['exclusiveMaximum', 100],
      ['type', 5.5],
      ['multipleOf', 6],
    ]);
    const valid = boundaryValidCases(paymentSchema).filter((c) => c.name.startsWith('/quantity:'));
    expect(valid.map((c) => valueAt(c.value, 'quantity'))).toEqual([5, 95]);
  });

  it('steps a thousandth past the bounds of a plain number', () => {
    const invalid = invalidCases(paymentSchema).filter(
      (c) => c.field === '/discount_rate' && (c.keyword === 'minimum' || c.keyword === 'maximum'),
    );
    expect(invalid.map((c) => valueAt(c.value, 'discount_rate'))).toEqual([-0.001, 1.001]);
  });

  it('takes a negative range from its lower end', () => {
    const all = boundaryValidCases(paymentSchema).find((c) => c.name === '(root): all optional properties present');
    expect(valueAt(all?.value, 'fee_minor')).toBe(-500);
  });
});
