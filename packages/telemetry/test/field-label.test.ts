import { describe, expect, it } from 'vitest';
import { fieldLabel } from '@gatehouse/telemetry';

const schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    customer_id: { type: 'string' },
    destination: { $ref: '#/$defs/destination' },
    tags: { type: 'array', items: { type: 'object', additionalProperties: false, properties: { label: { type: 'string' } } } },
    'a/b': { type: 'string' },
  },
  $defs: {
    destination: {
      oneOf: [
        { type: 'object', additionalProperties: false, properties: { kind: { const: 'saved' }, address_id: { type: 'string' } } },
        { type: 'object', additionalProperties: false, properties: { kind: { const: 'new' }, line1: { type: 'string' } } },
      ],
    },
  },
};

describe('fieldLabel', () => {
  it('keeps a pointer made of declared property names', () => {
    expect(fieldLabel(schema, '/customer_id')).toBe('/customer_id');
    expect(fieldLabel(schema, '')).toBe('');
  });

  it('follows local $refs and union branches', () => {
    expect(fieldLabel(schema, '/destination/line1')).toBe('/destination/line1');
    expect(fieldLabel(schema, '/destination/address_id')).toBe('/destination/address_id');
  });

  it('replaces an array index with * and carries on into the items', () => {
    expect(fieldLabel(schema, '/tags/17/label')).toBe('/tags/*/label');
  });

  it('replaces the name of an unknown field with *', () => {
    expect(fieldLabel(schema, '/password')).toBe('/*');
    expect(fieldLabel(schema, '/destination/iban')).toBe('/destination/*');
  });

  it('keeps an escaped declared name escaped', () => {
    expect(fieldLabel(schema, '/a~1b')).toBe('/a~1b');
  });

  it('cuts a deep pointer at eight tokens', () => {
    expect(fieldLabel({}, '/a/b/c/d/e/f/g/h/i/j')).toBe('/*/*/*/*/*/*/*/*/*');
  });

  it('answers * for something that is not a pointer', () => {
    expect(fieldLabel(schema, 'customer_id')).toBe('*');
  });
});
