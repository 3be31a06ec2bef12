import { EXAMPLES_HINT, UnsupportedSchemaError } from './unsupported-schema-error.js';

/**
 * Parses `pattern`s in a small regex subset: anchors `^…$` at the ends, literals,
 * character classes (`[A-Z]`, `[^…]`, `\d`, `\w`, `\s`, `.`), groups `(…)`/`(?:…)`/`(?<n>…)` with
 * alternation, and quantifiers `? * + {n} {n,} {n,m}`. Lookarounds, backreferences and word
 * boundaries are refused with `UnsupportedSchemaError`.
 */
export type RegexNode =
  | { readonly t: 'char'; readonly sample: string }
  | { readonly t: 'seq'; readonly items: readonly RegexNode[] }
  | { readonly t: 'alt'; readonly options: readonly RegexNode[] }
  | { readonly t: 'repeat'; readonly node: RegexNode; readonly min: number; readonly max: number };

const SAMPLE_CANDIDATES = [...'aA0_-. 1zZ9', ...Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i)), 'é', '\n'];
/** `.*` — what an unanchored end of a pattern stands for. */
export const ANY: RegexNode = { t: 'repeat', node: { t: 'char', sample: 'a' }, min: 0, max: Infinity };

/** Turns a pattern into a tree whose character classes are each reduced to one sample member. */
export class RegexParser {
  private i = 0;
  private readonly source: string;
  private readonly anchoredStart: boolean;
  private readonly anchoredEnd: boolean;

  constructor(
    private readonly pattern: string,
    private readonly at: string,
  ) {
    const anchoredStart = pattern.startsWith('^');
    const anchoredEnd = pattern.endsWith('$') && !isEscaped(pattern, pattern.length - 1);
    this.source = pattern.slice(anchoredStart ? 1 : 0, anchoredEnd ? pattern.length - 1 : pattern.length);
    this.anchoredStart = anchoredStart;
    this.anchoredEnd = anchoredEnd;
  }

  parse(): RegexNode {
    try {
      new RegExp(this.pattern, 'u');
    } catch (cause) {
      throw new UnsupportedSchemaError(this.at, `pattern ${this.pattern} is not a valid unicode regular expression`, { cause });
    }
    const body = this.alternation();
    if (this.i < this.source.length) this.fail(`unexpected "${this.source[this.i] ?? ''}"`);
    const items = [...(this.anchoredStart ? [] : [ANY]), body, ...(this.anchoredEnd ? [] : [ANY])];
    return { t: 'seq', items };
  }

  private alternation(): RegexNode {
    const options = [this.sequence()];
    while (this.source[this.i] === '|') {
      this.i += 1;
      options.push(this.sequence());
    }
    return options.length === 1 ? (options[0] ?? { t: 'seq', items: [] }) : { t: 'alt', options };
  }

  private sequence(): RegexNode {
    const items: RegexNode[] = [];
    while (this.i < this.source.length && this.source[this.i] !== '|' && this.source[this.i] !== ')') {
      items.push(this.quantified(this.atom()));
    }
    return { t: 'seq', items };
  }

  private atom(): RegexNode {
    const c = this.source[this.i] ?? '';
    switch (c) {
      case '(': {
        this.i += 1;
        if (this.source.startsWith('?:', this.i)) this.i += 2;
        else if (this.source.startsWith('?<', this.i) && !/^\?<[=!]/.test(this.source.slice(this.i))) {
          this.i = this.source.indexOf('>', this.i) + 1;
        } else if (this.source[this.i] === '?') this.fail('lookaround groups');
        const inner = this.alternation();
        if (this.source[this.i] !== ')') this.fail('unclosed group');
        this.i += 1;
        return inner;
      }
      case '[': {
        const start = this.i;
        this.i += 1;
        if (this.source[this.i] === '^') this.i += 1;
        while (this.i < this.source.length && this.source[this.i] !== ']') this.i += this.source[this.i] === '\\' ? 2 : 1;
        this.i += 1;
        return this.sampled(this.source.slice(start, this.i));
      }
      case '.':
        this.i += 1;
        return this.sampled('.');
      case '\\':
        return this.escape();
      case '^':
      case '$':
        return this.fail(`anchor "${c}" away from the ends`);
      case '*':
      case '+':
      case '?':
      case '{':
        return this.fail(`quantifier "${c}" without an atom`);
      default: {
        const char = String.fromCodePoint(this.source.codePointAt(this.i) ?? 0);
        this.i += char.length;
        return { t: 'char', sample: char };
      }
    }
  }

  private escape(): RegexNode {
    const next = this.source[this.i + 1] ?? '';
    const unicodeEscape = /^\\(?:u\{([0-9a-fA-F]+)\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2}))/.exec(this.source.slice(this.i));
    if (unicodeEscape !== null) {
      this.i += unicodeEscape[0].length;
      const hex = unicodeEscape[1] ?? unicodeEscape[2] ?? unicodeEscape[3] ?? '0';
      return { t: 'char', sample: String.fromCodePoint(parseInt(hex, 16)) };
    }
    if ('dDwWsS'.includes(next) && next !== '') {
      this.i += 2;
      return this.sampled(`\\${next}`);
    }
    if ((next === 'p' || next === 'P') && this.source[this.i + 2] === '{') {
      const end = this.source.indexOf('}', this.i) + 1;
      const text = this.source.slice(this.i, end);
      this.i = end;
      return this.sampled(text);
    }
    if (/[1-9bBkc]/.test(next)) return this.fail(`escape \\${next}`);
    const controls: Record<string, string> = { t: '\t', n: '\n', r: '\r', f: '\f', v: '\v', '0': '\0' };
    this.i += 2;
    return { t: 'char', sample: controls[next] ?? next };
  }

  private quantified(node: RegexNode): RegexNode {
    const c = this.source[this.i];
    let min: number;
    let max: number;
    if (c === '*' || c === '+' || c === '?') {
      this.i += 1;
      [min, max] = c === '*' ? [0, Infinity] : c === '+' ? [1, Infinity] : [0, 1];
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.i));
      if (m === null) return this.fail('malformed {n,m} quantifier');
      this.i += m[0].length;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' || m[3] === undefined ? Infinity : Number(m[3]);
    } else {
      return node;
    }
    if (this.source[this.i] === '?') this.i += 1;
    return { t: 'repeat', node, min, max };
  }

  /** A character class: one member found by testing candidates against the class itself. */
  private sampled(classSource: string): RegexNode {
    const re = new RegExp(`^(?:${classSource})$`, 'u');
    const sample = SAMPLE_CANDIDATES.find((c) => re.test(c));
    return sample === undefined ? this.fail(`class ${classSource} matches none of the sample characters`) : { t: 'char', sample };
  }

  private fail(reason: string): never {
    throw new UnsupportedSchemaError(
      this.at,
      `pattern ${this.pattern} uses ${reason}, outside the supported regex subset; ${EXAMPLES_HINT}`,
    );
  }
}

function isEscaped(text: string, index: number): boolean {
  let slashes = 0;
  for (let j = index - 1; j >= 0 && text[j] === '\\'; j -= 1) slashes += 1;
  return slashes % 2 === 1;
}
