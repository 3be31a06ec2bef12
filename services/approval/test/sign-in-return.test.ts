import { describe, expect, it } from 'vitest';
import { returnPath } from '../src/sign-in.js';

const CONSOLE = 'https://approvals.acme.example';
const LONG = 'a'.repeat(600);

/** Where a browser goes when answered `Location: <path>` by the console. */
const followed = (path: string): URL => new URL(path, CONSOLE);

/** Return paths an attacker would hand a person in a sign-in link, and what the console keeps of each. */
const HOSTILE: ReadonlyArray<readonly [string, string]> = [
  ['//evil.example/x', '/'],
  ['/\t/evil.example/x', '/'],
  ['/\n/evil.example/x', '/'],
  ['/\r/evil.example/x', '/'],
  ['/\u0000/evil.example', '/'],
  ['/\u007f/evil.example', '/'],
  ['\\\\evil.example/x', '/'],
  ['/\\evil.example/x', '/'],
  ['https://evil.example/x', '/'],
  ['http:evil.example', '/'],
  ['javascript:alert(1)', '/'],
  ['data:text/html,<script>alert(1)</script>', '/'],
  // The parser makes each of these the path `//evil.example`, which a browser reads as another host.
  ['/.//evil.example/x', '/'],
  ['/%2e//evil.example/x', '/'],
  ['/x/..//evil.example/x', '/'],
  ['///evil.example/x', '/'],
  // Another port or scheme is another origin.
  ['https://approvals.acme.example:8443/x', '/'],
  ['http://approvals.acme.example/x', '/'],
  [`//evil.example/${LONG}`, '/'],
  [`/${LONG}`, '/'],
  // These stay on the console: kept as the parser reads them.
  ['/%09/evil.example/x', '/%09/evil.example/x'],
  [' /x', '/x'],
  // The console's own scheme without a host is a path of the console to the parser (and to browsers).
  ['https:evil.example', '/evil.example'],
  ['//approvals.acme.example/x#proposal=p_1', '/x#proposal=p_1'],
];

const GOOD: ReadonlyArray<readonly [string, string]> = [
  ['/', '/'],
  ['/#proposal=p_1', '/#proposal=p_1'],
  ['/#approve=p_1', '/#approve=p_1'],
  ['/?a=b#x', '/?a=b#x'],
  ['/requests/p_1?tab=diff', '/requests/p_1?tab=diff'],
  ['/caf\u00e9 au lait', '/caf%C3%A9%20au%20lait'],
];

describe('the path a sign-in returns the browser to', () => {
  it.each(HOSTILE)('keeps %j on the console as %j', (candidate, kept) => {
    const path = returnPath(candidate, CONSOLE);
    expect(path).toBe(kept);
    expect(followed(path).origin).toBe(CONSOLE);
  });

  it.each(GOOD)('keeps the console path %j as %j', (candidate, kept) => {
    expect(returnPath(candidate, CONSOLE)).toBe(kept);
  });

  it('returns to the start page when no path was asked for', () => {
    expect(returnPath(undefined, CONSOLE)).toBe('/');
  });

  it('refuses every control character and the backslash anywhere in the path, even in its fragment', () => {
    const unsafe = [...Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code)), '\u007f', '\\'];
    for (const character of unsafe) expect(returnPath(`/x#a${character}b`, CONSOLE), JSON.stringify(character)).toBe('/');
  });

  it('sends nothing a browser could read as another host, whatever the console’s own address', () => {
    for (const console of ['http://127.0.0.1:4000', 'https://approvals.acme.example/', 'https://approvals.acme.example/console/'])
      for (const [candidate] of [...HOSTILE, ...GOOD]) {
        const path = returnPath(candidate, console);
        expect(path.startsWith('/') && !path.startsWith('//'), `${candidate} at ${console}`).toBe(true);
        expect(new URL(path, console).origin, `${candidate} at ${console}`).toBe(new URL(console).origin);
      }
  });
});
