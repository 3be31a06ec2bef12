import { boundaryValidCases, caseCounts, invalidCases, minimalValidCase } from '@gatehouse/testkit';
import { describe, expect, it } from 'vitest';
import { addressChangeSchema } from './schemas.js';

const cases = invalidCases(addressChangeSchema);
const byField = (field: string): string[] => cases.filter((c) => c.field === field).map((c) => c.keyword);

describe('cases for the seed destination union', () => {
  it('starts from the first branch with only required properties', () => {
    expect(minimalValidCase(addressChangeSchema)).toEqual({ customer_id: 'a', destination: { kind: 'saved', address_id: 'a' } });
  });

  it('removes each required property at every object level and names the missing property', () => {
    for (const field of [
      '/customer_id',
      '/destination',
      '/destination/kind',
      '/destination/address_id',
      '/destination/line1',
      '/destination/city',
      '/destination/country',
    ]) {
      expect(byField(field)).toContain('required');
    }
  });

  it('adds an unknown field at the root and inside each branch', () => {
    const unknown = cases.filter((c) => c.field.endsWith('/zz_unknown_field'));
    expect(unknown.map((c) => c.field)).toEqual(['/zz_unknown_field', '/destination/zz_unknown_field', '/destination/zz_unknown_field']);
    expect(unknown.every((c) => c.keyword === 'additionalProperties')).toBe(true);
  });

  it('sends an unknown discriminator and points at it', () => {
    const unknownKind = cases.find((c) => c.keyword === 'discriminator');
    expect(unknownKind).toMatchObject({ field: '/destination/kind', value: { destination: { kind: 'zz_unknown_kind' } } });
  });

  it('mixes a required field of the other branch into each branch', () => {
    expect(cases.find((c) => c.field === '/destination/line1' && c.keyword === 'additionalProperties')?.value).toEqual({
      customer_id: 'a',
      destination: { kind: 'saved', address_id: 'a', line1: 'a' },
    });
    expect(cases.find((c) => c.field === '/destination/address_id' && c.keyword === 'additionalProperties')?.value).toEqual({
      customer_id: 'a',
      destination: { kind: 'new', line1: 'a', city: 'a', country: 'AA', address_id: 'a' },
    });
  });

  it('breaks the country pattern at a valid length and names the pattern', () => {
    const broken = cases.find((c) => c.name === '/destination/country: pattern ^[A-Z]{2}$ broken');
    expect(broken?.field).toBe('/destination/country');
    const country = (broken?.value as { destination: { country: string } }).destination.country;
    expect(country).toHaveLength(2);
    expect(/^[A-Z]{2}$/u.test(country)).toBe(false);
  });

  it('tries an empty and a wrongly typed customer_id', () => {
    expect(byField('/customer_id').sort()).toEqual(['minLength', 'required', 'type']);
  });

  it('includes the minimal case of each branch among the valid cases', () => {
    const names = boundaryValidCases(addressChangeSchema).map((c) => c.name);
    expect(names).toContain('/destination: branch kind=saved minimal');
    expect(names).toContain('/destination: branch kind=new minimal');
  });

  it('counts 7 valid and 24 invalid cases', () => {
    expect(caseCounts(addressChangeSchema)).toEqual({ valid: 7, invalid: 24 });
  });
});
