import { parseSigningKey, parseTrustedKeys } from '@gatehouse/events';
import type { SigningKey, TrustedKeys } from '@gatehouse/events';
import { parseSealingKeys, parseUnsealingKeys } from '@gatehouse/identity';
import type { SealingKeys, UnsealingKeys } from '@gatehouse/identity';

/** What parsing one set, non-empty value gives: the typed value, or why it is refused. */
export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string; readonly cause?: unknown };

/** How a variable's text becomes a typed value: the parser and its one-line description for the configuration table. */
export interface ValueKind<T> {
  /** The configuration table's "values" column: `integer ≥ 1`, `port 0..65535`, `http(s) URL`. */
  readonly describe: string;
  readonly parse: (raw: string) => Parsed<T>;
}

const DIGITS = /^\d+$/;

function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

function refused<T>(reason: string, cause?: unknown): Parsed<T> {
  return cause === undefined ? { ok: false, reason } : { ok: false, reason, cause };
}

/** Decimal digits only (no sign, exponent, hex or blanks), within `min..max`. */
export function integer(min: number, max: number = Number.MAX_SAFE_INTEGER): ValueKind<number> {
  const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `${min}..${max}`;
  return {
    describe: `integer ${range}`,
    parse: (raw) => {
      const value = Number(raw);
      if (!DIGITS.test(raw) || !Number.isSafeInteger(value)) return refused(`not a whole number (decimal digits only; must be ${range})`);
      return value < min || value > max ? refused(`out of range (must be ${range})`) : ok(value);
    },
  };
}

/** A TCP port; 0 asks the system for any free port. */
export function port(): ValueKind<number> {
  const kind = integer(0, 65_535);
  return { describe: 'port 0..65535 (0 = any free port)', parse: kind.parse };
}

export interface TextRules {
  readonly minLength?: number;
  /** A pattern the whole value must match, and how the refusal says it. */
  readonly pattern?: { readonly regex: RegExp; readonly says: string };
}

/** Free text: a host, a path, an id, a prefix; optionally with a minimum length or a pattern. */
export function text(rules: TextRules = {}): ValueKind<string> {
  const { minLength, pattern } = rules;
  const describe = pattern?.says ?? (minLength === undefined ? 'text' : `text, at least ${minLength} characters`);
  return {
    describe,
    parse: (raw) => {
      if (minLength !== undefined && raw.length < minLength) return refused(`too short (must be at least ${minLength} characters)`);
      if (pattern !== undefined && !pattern.regex.test(raw)) return refused(`not ${pattern.says} (must match ${pattern.regex.source})`);
      return ok(raw);
    },
  };
}

/** One of a closed list of words. */
export function oneOf<const W extends readonly string[]>(words: W): ValueKind<W[number]> {
  return {
    describe: `one of ${words.join(', ')}`,
    parse: (raw) => {
      const word = words.find((w) => w === raw);
      return word === undefined ? refused(`not one of ${words.join(', ')}`) : ok(word);
    },
  };
}

export interface UrlRules {
  /** Accepted schemes without the colon: `['http', 'https']`. */
  readonly schemes: readonly string[];
  /** Drop trailing slashes, so paths can be appended with `/`. */
  readonly trimTrailingSlash?: boolean;
}

/** A URL whose scheme is one of `schemes`. */
export function url(rules: UrlRules): ValueKind<string> {
  const schemes = rules.schemes.map((s) => `${s}://`).join(' or ');
  return {
    describe: `${schemes} URL`,
    parse: (raw) => {
      let parsed: URL;
      try {
        parsed = new URL(raw);
      } catch (cause) {
        return refused('not a URL', cause);
      }
      if (!rules.schemes.includes(parsed.protocol.slice(0, -1))) return refused(`not a ${schemes} URL`);
      return ok(rules.trimTrailingSlash === true ? raw.replace(/\/+$/, '') : raw);
    },
  };
}

/** Comma-separated `host:port` entries (blanks around commas ignored), at least one. */
export function hostPortList(): ValueKind<readonly string[]> {
  return {
    describe: 'comma-separated host:port list',
    parse: (raw) => {
      const list = raw
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0);
      if (list.length === 0) return refused('lists no host:port');
      const bad = list.find((entry) => !/^[^\s:]+:\d{1,5}$/.test(entry));
      return bad === undefined ? ok(list) : refused(`entry "${bad}" is not host:port`);
    },
  };
}

/** A JSON object whose every value is an integer ≥ `min`, e.g. `{"acme": 2}`. */
export function jsonIntegerMap(min: number): ValueKind<Readonly<Record<string, number>>> {
  return {
    describe: `JSON object of name → integer ≥ ${min}`,
    parse: (raw) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch (cause) {
        return refused(`not a JSON object (${cause instanceof Error ? cause.message : String(cause)})`, cause);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        return refused(`not a JSON object (got ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed})`);
      }
      const map: Record<string, number> = {};
      for (const [key, value] of Object.entries(parsed)) {
        if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
          return refused(`the value of "${key}" is not an integer ≥ ${min}`);
        map[key] = value;
      }
      return ok(map);
    },
  };
}

/** `<key id>:<base64 PKCS#8 Ed25519 private key>`: what an issuer of execution orders signs with. */
export function signingKey(): ValueKind<SigningKey> {
  return {
    describe: '`<key id>:<base64 PKCS#8 Ed25519 key>`',
    parse: (raw) => {
      try {
        return ok(parseSigningKey(raw));
      } catch (error) {
        return refused(error instanceof Error ? error.message : 'not a signing key');
      }
    },
  };
}

/** Comma-separated `<key id>:<base64 SPKI Ed25519 public key>`: the keys whose orders an executor runs. */
export function trustedKeys(): ValueKind<TrustedKeys> {
  return {
    describe: 'comma-separated `<key id>:<base64 SPKI Ed25519 key>`',
    parse: (raw) => {
      try {
        return ok(parseTrustedKeys(raw));
      } catch (error) {
        return refused(error instanceof Error ? error.message : 'not a list of public keys');
      }
    },
  };
}

/** Comma-separated `<key id>:<base64 SPKI X25519 or P-256 key>`: the executors' public keys people's tokens are sealed to. */
export function sealingKeys(): ValueKind<SealingKeys> {
  return {
    describe: 'comma-separated `<key id>:<base64 SPKI X25519 or P-256 key>`',
    parse: (raw) => {
      try {
        return ok(parseSealingKeys(raw));
      } catch (error) {
        return refused(error instanceof Error ? error.message : 'not a list of sealing keys');
      }
    },
  };
}

/** Comma-separated `<key id>:<base64 PKCS#8 X25519 or P-256 key>`: an executor's private halves of those keys. */
export function unsealingKeys(): ValueKind<UnsealingKeys> {
  return {
    describe: 'comma-separated `<key id>:<base64 PKCS#8 X25519 or P-256 key>`',
    parse: (raw) => {
      try {
        return ok(parseUnsealingKeys(raw));
      } catch (error) {
        return refused(error instanceof Error ? error.message : 'not a list of unsealing keys');
      }
    },
  };
}
