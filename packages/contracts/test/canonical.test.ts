import { describe, expect, it } from 'vitest';
import { CanonicalJsonError, canonicalArguments, canonicalJson, sha256Hex } from '@gatehouse/contracts';

function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe('canonicalJson (RFC 8785)', () => {
  it('serializes the example of RFC 8785 section 3.2.2', () => {
    const input = String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`;
    expect(canonicalJson(JSON.parse(input))).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it('sorts keys by UTF-16 code units as in RFC 8785 section 3.2.3', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('writes numbers in the ECMAScript form of RFC 8785 appendix B', () => {
    const cases: [string, string][] = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af6', '1e+23'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ];
    for (const [bits, text] of cases) expect(canonicalJson(fromBits(bits)), bits).toBe(text);
    expect(canonicalJson(1e21)).toBe('1e+21');
    expect(canonicalJson(-0)).toBe('0');
  });

  it('escapes only what JSON requires and keeps other characters literal', () => {
    expect(canonicalJson('\u001f\u2028é\t')).toBe('"\\u001f\u2028é\\t"');
  });

  it('rejects values JSON cannot represent and names where they are', () => {
    const cases: [unknown, string][] = [
      [undefined, ''],
      [{ a: { b: undefined } }, '/a/b'],
      [[1, undefined], '/1'],
      [{ f: () => 1 }, '/f'],
      [{ n: Number.NaN }, '/n'],
      [[Infinity], '/0'],
      [{ big: 10n }, '/big'],
      [{ s: Symbol('x') }, '/s'],
      [{ 'a/b': '\ud800' }, '/a~1b'],
      [{ m: new Map() }, '/m'],
      [{ d: new Date(0) }, '/d'],
      // A hole in a sparse array is undefined, not null: canonicalize would write `[,1]`.
      [{ list: [[1], [, 1]] }, '/list/1/0'],
      [{ '\udc00': 1 }, '/\udc00'],
      [{ a: [{ 'x~y': { z: [0, '\udfff'] } }] }, '/a/0/x~0y/z/1'],
    ];
    for (const [value, field] of cases) {
      let caught: unknown;
      try {
        canonicalJson(value);
      } catch (error) {
        caught = error;
      }
      expect(caught, field).toBeInstanceOf(CanonicalJsonError);
      expect((caught as CanonicalJsonError).field, field).toBe(field);
      expect((caught as CanonicalJsonError).code).toBe('INVALID_ARGUMENT');
    }
  });

  it('rejects a circular structure', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/circular/);
  });

  it('accepts a well-formed surrogate pair and an object without prototype', () => {
    const bare = Object.assign(Object.create(null) as object, { b: 1, a: '\ud83d\ude00' });
    expect(canonicalJson(bare)).toBe('{"a":"\ud83d\ude00","b":1}');
  });
});

describe('sha256Hex and canonicalArguments', () => {
  it('hashes the UTF-8 bytes as lower-case hex', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('gives the same canonical text and hash for the same arguments in any key order', () => {
    const a = canonicalArguments({ customer_id: 'C-1842', destination: { kind: 'saved', address_id: 'A-1' } });
    const b = canonicalArguments({ destination: { address_id: 'A-1', kind: 'saved' }, customer_id: 'C-1842' });
    expect(a).toEqual(b);
    expect(a.canonical).toBe('{"customer_id":"C-1842","destination":{"address_id":"A-1","kind":"saved"}}');
    expect(a.sha256).toBe(sha256Hex(a.canonical));
    expect(canonicalArguments({ customer_id: 'C-1843' }).sha256).not.toBe(a.sha256);
  });
});
