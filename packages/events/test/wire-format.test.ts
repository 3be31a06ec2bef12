import { describe, expect, it } from 'vitest';
import { readWireHeader, writeWireFormat } from '@gatehouse/events';

describe('the Confluent wire format', () => {
  it('reads back the schema id and body it wrote', () => {
    const framed = writeWireFormat(4242, Buffer.from([1, 2, 3]));
    expect(framed.subarray(0, 5)).toEqual(Buffer.from([0, 0, 0, 0x10, 0x92]));
    const header = readWireHeader(framed);
    expect(header.ok && header.schemaId).toBe(4242);
    expect(header.ok && [...header.body]).toEqual([1, 2, 3]);
  });

  it.each([
    ['a missing value', null, /no value/],
    ['an empty value', Buffer.alloc(0), /no value/],
    ['a value shorter than the header', Buffer.from([0, 0, 1]), /shorter than the 5-byte/],
    ['a wrong magic byte', Buffer.from([7, 0, 0, 0, 1, 9]), /magic byte is 0x07/],
  ])('refuses %s with a reason', (_label, value, message) => {
    const header = readWireHeader(value);
    expect(header.ok).toBe(false);
    expect(!header.ok && header.message).toMatch(message);
  });
});
