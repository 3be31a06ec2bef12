import { codePointLength } from './json-schema.js';
import { breakPattern, MAX_PATTERN_EXAMPLE_LENGTH, PatternExamples } from './regex-example.js';
import type { BrokenRule, ScalarRule } from './scalar-rule.js';
import type { ScalarShape } from './schema-shape.js';
import { EXAMPLES_HINT, UnsupportedSchemaError } from './unsupported-schema-error.js';

interface FormatSample {
  readonly valid: string;
  /** A valid value of exactly `length` code points, when the format can be padded. */
  readonly ofLength: (length: number) => string | undefined;
  /** A value of (about) the same length that the format rejects. */
  readonly broken: (valid: string) => string;
}

const fixed =
  (valid: string): ((length: number) => string | undefined) =>
  (length) =>
    length === valid.length ? valid : undefined;

const KNOWN_FORMATS: Readonly<Record<string, FormatSample>> = {
  date: { valid: '2024-01-01', ofLength: fixed('2024-01-01'), broken: () => '2024-02-30' },
  'date-time': { valid: '2024-01-01T00:00:00Z', ofLength: fixed('2024-01-01T00:00:00Z'), broken: () => '2024-01-01T25:00:00Z' },
  email: {
    valid: 'a@example.com',
    ofLength: (n) => (n >= 13 ? `${'a'.repeat(n - 12)}@example.com` : undefined),
    broken: (valid) => valid.replace('@', '.'),
  },
  uuid: {
    valid: '00000000-0000-4000-8000-000000000000',
    ofLength: fixed('00000000-0000-4000-8000-000000000000'),
    broken: () => '00000000-0000-4000-8000-00000000000z',
  },
  uri: {
    valid: 'https://example.com',
    ofLength: (n) => (n === 19 ? 'https://example.com' : n >= 20 ? `https://example.com/${'a'.repeat(n - 20)}` : undefined),
    broken: (valid) => valid.replace('://', '//'),
  },
};

/** Formats the generator can satisfy; any other format needs `examples`. */
export const SUPPORTED_FORMATS: readonly string[] = Object.keys(KNOWN_FORMATS);

/** Longest over-the-limit string generated; longer `maxLength`s get no "one past" case. */
const MAX_GENERATED_LENGTH = 100_000;

/** Values for one `type: string` location. */
export class StringRules {
  private readonly min: number;
  private readonly max: number;
  private readonly pattern: string | undefined;
  private readonly format: FormatSample | undefined;
  private readonly unknownFormat: string | undefined;
  private parsed: PatternExamples | UnsupportedSchemaError | undefined;

  constructor(private readonly shape: ScalarShape) {
    const s = shape.schema;
    this.min = s.minLength ?? 0;
    this.max = s.maxLength ?? Infinity;
    this.pattern = s.pattern;
    this.format = s.format === undefined ? undefined : KNOWN_FORMATS[s.format];
    this.unknownFormat = s.format !== undefined && this.format === undefined ? s.format : undefined;
  }

  /**
   * The pattern's example generator, parsed on first use so that a pattern outside the subset is
   * only an error when no `examples[0]` stands in for it. `strict: false` answers undefined instead.
   */
  private examples(strict: boolean): PatternExamples | undefined {
    if (this.pattern === undefined) return undefined;
    if (this.parsed === undefined) {
      try {
        this.parsed = new PatternExamples(this.pattern, `${this.shape.at}/pattern`);
      } catch (error) {
        if (!(error instanceof UnsupportedSchemaError)) throw error;
        this.parsed = error;
      }
    }
    if (this.parsed instanceof UnsupportedSchemaError) {
      if (strict) throw this.parsed;
      return undefined;
    }
    return this.parsed;
  }

  /** Whether an author-given example satisfies the length and pattern limits. */
  accepts(value: unknown): value is string {
    if (typeof value !== 'string') return false;
    const length = codePointLength(value);
    return length >= this.min && length <= this.max && (this.pattern === undefined || new RegExp(this.pattern, 'u').test(value));
  }

  /** The shortest valid string, non-empty unless `maxLength` is 0. */
  minimal(): string {
    if (this.unknownFormat !== undefined) {
      throw new UnsupportedSchemaError(this.shape.at, `format "${this.unknownFormat}" has no built-in example; ${EXAMPLES_HINT}`);
    }
    const floor = Math.min(Math.max(this.min, 1), this.max);
    const examples = this.format === undefined ? this.examples(true) : undefined;
    if (examples !== undefined) {
      const shortest = examples.shortestWithin(floor, this.max) ?? this.ofLength(0);
      if (shortest !== undefined) return shortest;
    } else {
      for (let n = floor; n <= Math.min(this.max, floor + MAX_PATTERN_EXAMPLE_LENGTH); n += 1) {
        const value = this.ofLength(n);
        if (value !== undefined) return value;
      }
    }
    throw new UnsupportedSchemaError(this.shape.at, `no string satisfies its length, pattern and format together; ${EXAMPLES_HINT}`);
  }

  boundaries(): ScalarRule[] {
    if (this.unknownFormat !== undefined) return [];
    const rules: ScalarRule[] = [];
    const push = (label: string, length: number): void => {
      const value = this.ofLength(length);
      if (value !== undefined) rules.push({ label, value });
    };
    if (this.shape.schema.minLength !== undefined) push(`minLength ${this.min}`, this.min);
    else push('empty string (no minLength)', 0);
    if (this.shape.schema.maxLength !== undefined) push(`maxLength ${this.max}`, this.max);
    return rules;
  }

  broken(minimal: string): BrokenRule[] {
    const rules: BrokenRule[] = [];
    const s = this.shape.schema;
    const emptyForbiddenBy: readonly [string, string] | undefined =
      this.min >= 1
        ? ['minLength', String(this.min)]
        : this.pattern !== undefined && !new RegExp(this.pattern, 'u').test('')
          ? ['pattern', this.pattern]
          : s.format !== undefined
            ? ['format', s.format]
            : undefined;
    if (emptyForbiddenBy !== undefined) {
      const [keyword, limit] = emptyForbiddenBy;
      rules.push({ label: `empty string (${keyword} ${limit})`, value: '', keyword });
    }
    if (this.min >= 2) {
      rules.push({
        label: `one under minLength ${this.min}`,
        value: this.build(this.min - 1) ?? [...minimal].slice(0, this.min - 1).join(''),
        keyword: 'minLength',
      });
    }
    if (this.max !== Infinity && this.max + 1 <= MAX_GENERATED_LENGTH) {
      const value = this.build(this.max + 1) ?? minimal + 'a'.repeat(this.max + 1 - codePointLength(minimal));
      rules.push({ label: `one past maxLength ${this.max}`, value, keyword: 'maxLength' });
    }
    if (this.pattern !== undefined) {
      const value = breakPattern(this.pattern, minimal, this.min, this.max);
      if (value !== undefined) rules.push({ label: `pattern ${this.pattern} broken`, value, keyword: 'pattern' });
    }
    if (this.format !== undefined && s.format !== undefined) {
      rules.push({ label: `format ${s.format} broken`, value: this.format.broken(minimal), keyword: 'format' });
    }
    return rules;
  }

  /** A valid string of exactly `length` code points, if this location allows one. */
  private ofLength(length: number): string | undefined {
    return length < this.min || length > this.max ? undefined : this.build(length);
  }

  /** A string of exactly `length` code points meeting pattern and format, ignoring length limits. */
  private build(length: number): string | undefined {
    if (length < 0 || this.unknownFormat !== undefined) return undefined;
    if (this.format !== undefined) {
      const value = this.format.ofLength(length);
      return value !== undefined && (this.pattern === undefined || new RegExp(this.pattern, 'u').test(value)) ? value : undefined;
    }
    if (this.pattern !== undefined) return this.examples(false)?.ofLength(length);
    return length > MAX_GENERATED_LENGTH ? undefined : 'a'.repeat(length);
  }
}
