import type { BrokenRule, ScalarRule } from './scalar-rule.js';
import type { ScalarShape } from './schema-shape.js';
import { UnsupportedSchemaError } from './unsupported-schema-error.js';

interface Bound {
  readonly value: number;
  readonly exclusive: boolean;
}

/** Rounds away binary noise (0.1 * 3 → 0.3) so generated numbers read as written. */
function tidy(value: number): number {
  return Number.parseFloat(value.toPrecision(15));
}

function decimals(value: number): number {
  const text = String(value);
  const exponent = /e-(\d+)$/.exec(text);
  if (exponent !== null) return Number(exponent[1]);
  return text.includes('.') ? (text.split('.')[1]?.length ?? 0) : 0;
}

function tighter(inclusive: number | undefined, exclusive: number | undefined, pick: (a: number, b: number) => boolean): Bound | undefined {
  if (inclusive === undefined) return exclusive === undefined ? undefined : { value: exclusive, exclusive: true };
  if (exclusive === undefined) return { value: inclusive, exclusive: false };
  return pick(exclusive, inclusive) || exclusive === inclusive
    ? { value: exclusive, exclusive: true }
    : { value: inclusive, exclusive: false };
}

/** Values for one `type: number` or `type: integer` location. */
export class NumberRules {
  private readonly integer: boolean;
  private readonly lower: Bound | undefined;
  private readonly upper: Bound | undefined;
  private readonly multipleOf: number | undefined;

  constructor(private readonly shape: ScalarShape) {
    const s = shape.schema;
    this.integer = shape.kind === 'integer';
    this.lower = tighter(s.minimum, s.exclusiveMinimum, (a, b) => a > b);
    this.upper = tighter(s.maximum, s.exclusiveMaximum, (a, b) => a < b);
    this.multipleOf = s.multipleOf;
  }

  accepts(value: unknown): value is number {
    if (typeof value !== 'number' || !Number.isFinite(value)) return false;
    if (this.integer && !Number.isInteger(value)) return false;
    if (this.lower !== undefined && (this.lower.exclusive ? value <= this.lower.value : value < this.lower.value)) return false;
    if (this.upper !== undefined && (this.upper.exclusive ? value >= this.upper.value : value > this.upper.value)) return false;
    // The same test Ajv runs (without multipleOfPrecision).
    return this.multipleOf === undefined || (value / this.multipleOf) % 1 === 0;
  }

  /** The lowest valid value: at the lower bound, else at 0, else just under a negative upper bound. */
  minimal(): number {
    const start =
      this.lower !== undefined
        ? this.above(this.lower.value, !this.lower.exclusive)
        : this.upper !== undefined && this.upper.value <= 0
          ? this.below(this.upper.value, !this.upper.exclusive)
          : this.above(0, true);
    if (start === undefined || !this.accepts(start)) {
      throw new UnsupportedSchemaError(this.shape.at, 'no number satisfies its bounds and multipleOf together');
    }
    return start;
  }

  boundaries(): ScalarRule[] {
    const rules: ScalarRule[] = [];
    const add = (bound: Bound | undefined, name: string, value: number | undefined): void => {
      if (bound === undefined || value === undefined || !this.accepts(value)) return;
      const keyword = bound.exclusive ? `exclusive${name[0]?.toUpperCase() ?? ''}${name.slice(1)}` : name;
      rules.push({
        label: value === bound.value ? `${keyword} ${bound.value}` : `nearest valid ${value} (${keyword} ${bound.value})`,
        value,
      });
    };
    add(this.lower, 'minimum', this.lower === undefined ? undefined : this.above(this.lower.value, !this.lower.exclusive));
    add(this.upper, 'maximum', this.upper === undefined ? undefined : this.below(this.upper.value, !this.upper.exclusive));
    return rules;
  }

  broken(minimal: number): BrokenRule[] {
    const rules: BrokenRule[] = [];
    if (this.lower !== undefined) {
      const { value, exclusive } = this.lower;
      const outside = exclusive ? value : this.below(value, false);
      const keyword = exclusive ? 'exclusiveMinimum' : 'minimum';
      if (outside !== undefined)
        rules.push({ label: `${exclusive ? 'equal to' : 'below'} ${keyword} ${value} (${outside})`, value: outside, keyword });
    }
    if (this.upper !== undefined) {
      const { value, exclusive } = this.upper;
      const outside = exclusive ? value : this.above(value, false);
      const keyword = exclusive ? 'exclusiveMaximum' : 'maximum';
      if (outside !== undefined)
        rules.push({ label: `${exclusive ? 'equal to' : 'above'} ${keyword} ${value} (${outside})`, value: outside, keyword });
    }
    if (this.integer) {
      const value = [minimal + 0.5, minimal - 0.5].find((v) => this.withinBounds(v)) ?? minimal + 0.5;
      rules.push({ label: `non-integer ${value}`, value, keyword: 'type' });
    }
    if (this.multipleOf !== undefined) {
      const d = this.multipleOf;
      const offset = this.integer ? (d > 1 ? 1 : undefined) : tidy(d / 2);
      const value = offset === undefined ? undefined : [tidy(minimal + offset), tidy(minimal - offset)].find((v) => this.withinBounds(v));
      if (value !== undefined) rules.push({ label: `not a multiple of ${d} (${value})`, value, keyword: 'multipleOf' });
    }
    return rules;
  }

  private withinBounds(value: number): boolean {
    const lowerOk = this.lower === undefined || (this.lower.exclusive ? value > this.lower.value : value >= this.lower.value);
    const upperOk = this.upper === undefined || (this.upper.exclusive ? value < this.upper.value : value <= this.upper.value);
    return lowerOk && upperOk;
  }

  /** The distance to the nearest neighbouring value when nothing else fixes it. */
  private step(near: number): number {
    return this.multipleOf ?? (this.integer ? 1 : 10 ** -Math.max(3, decimals(near) + 1));
  }

  /** The smallest value ≥ x (or > x) that is an integer / multiple where required; bounds are not checked. */
  private above(x: number, inclusive: boolean): number | undefined {
    return this.nearest(x, inclusive, 1);
  }

  private below(x: number, inclusive: boolean): number | undefined {
    return this.nearest(x, inclusive, -1);
  }

  private nearest(x: number, inclusive: boolean, direction: 1 | -1): number | undefined {
    const beyond = (v: number): boolean => (direction === 1 ? (inclusive ? v >= x : v > x) : inclusive ? v <= x : v < x);
    const d = this.multipleOf;
    if (d !== undefined) {
      let k = direction === 1 ? Math.ceil(x / d) : Math.floor(x / d);
      for (let tries = 0; tries < 8; tries += 1, k += direction) {
        const v = tidy(k * d);
        if (beyond(v) && (v / d) % 1 === 0 && (!this.integer || Number.isInteger(v))) return v;
      }
      return undefined;
    }
    if (this.integer) {
      const v = direction === 1 ? Math.ceil(x) : Math.floor(x);
      return beyond(v) ? v : v + direction;
    }
    return inclusive ? x : tidy(x + direction * this.step(x));
  }
}
