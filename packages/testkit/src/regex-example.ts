import { ANY, RegexParser } from './regex-parser.js';
import type { RegexNode } from './regex-parser.js';

/** Longest example the generator builds; longer limits are skipped rather than slowly computed. */
export const MAX_PATTERN_EXAMPLE_LENGTH = 512;

/**
 * Example strings of chosen lengths for a `pattern` (see `RegexParser` for the subset), found by
 * tracking which lengths each part of the expression can take.
 */
export class PatternExamples {
  private readonly tree: RegexNode;
  private readonly cap: number;
  private readonly lengths = new Map<RegexNode, Uint8Array>();
  private readonly exact = new Map<RegexNode, Uint8Array[]>();

  /** `at` is the schema pointer reported when the pattern is outside the subset. */
  constructor(pattern: string, at: string, cap = MAX_PATTERN_EXAMPLE_LENGTH) {
    this.tree = new RegexParser(pattern, at).parse();
    this.cap = cap;
  }

  /** The shortest matching string whose length lies in [min, max]. */
  shortestWithin(min: number, max: number): string | undefined {
    const lens = this.lengthsOf(this.tree);
    for (let n = min; n <= Math.min(max, this.cap); n += 1) {
      if (lens[n] === 1) return this.build(this.tree, n);
    }
    return undefined;
  }

  /** A matching string of exactly `length` code points, if one exists within the cap. */
  ofLength(length: number): string | undefined {
    if (length < 0 || length > this.cap) return undefined;
    return this.lengthsOf(this.tree)[length] === 1 ? this.build(this.tree, length) : undefined;
  }

  private lengthsOf(node: RegexNode): Uint8Array {
    const known = this.lengths.get(node);
    if (known !== undefined) return known;
    let out: Uint8Array;
    switch (node.t) {
      case 'char':
        out = this.set([1]);
        break;
      case 'seq':
        out = node.items.reduce((acc, item) => this.convolve(acc, this.lengthsOf(item)), this.set([0]));
        break;
      case 'alt':
        out = new Uint8Array(this.cap + 1);
        for (const option of node.options) this.lengthsOf(option).forEach((v, i) => (out[i] = out[i] === 1 || v === 1 ? 1 : 0));
        break;
      case 'repeat': {
        out = new Uint8Array(this.cap + 1);
        this.exactCounts(node).forEach((reach, count) => {
          if (count >= node.min) reach.forEach((v, i) => (out[i] = out[i] === 1 || v === 1 ? 1 : 0));
        });
        break;
      }
    }
    this.lengths.set(node, out);
    return out;
  }

  /** reach[k]: lengths achievable with exactly k copies of the repeated node. */
  private exactCounts(node: Extract<RegexNode, { t: 'repeat' }>): Uint8Array[] {
    const known = this.exact.get(node);
    if (known !== undefined) return known;
    const unit = this.lengthsOf(node.node);
    const reach = [this.set([0])];
    const covered = this.set(node.min === 0 ? [0] : []);
    const limit = Math.min(node.max, Math.max(node.min, this.cap));
    for (let k = 1; k <= limit; k += 1) {
      const next = this.convolve(reach[k - 1] ?? this.set([]), unit);
      // Once k copies reach nothing that fewer (≥ min) copies did not, more copies add nothing either.
      if (k > node.min && next.every((v, i) => v === 0 || covered[i] === 1)) break;
      reach.push(next);
      if (k >= node.min) next.forEach((v, i) => (covered[i] = covered[i] === 1 || v === 1 ? 1 : 0));
    }
    this.exact.set(node, reach);
    return reach;
  }

  private build(node: RegexNode, length: number): string {
    switch (node.t) {
      case 'char':
        return node.sample;
      case 'alt': {
        const option = node.options.find((o) => this.lengthsOf(o)[length] === 1);
        return option === undefined ? '' : this.build(option, length);
      }
      case 'seq': {
        const suffix: Uint8Array[] = [this.set([0])];
        for (let i = node.items.length - 1; i >= 0; i -= 1) {
          suffix.unshift(this.convolve(this.lengthsOf(node.items[i] ?? ANY), suffix[0] ?? this.set([0])));
        }
        let remaining = length;
        let text = '';
        node.items.forEach((item, i) => {
          const rest = suffix[i + 1] ?? this.set([0]);
          const own = this.lengthsOf(item);
          const pick = own.findIndex((v, l) => v === 1 && l <= remaining && rest[remaining - l] === 1);
          text += this.build(item, pick);
          remaining -= pick;
        });
        return text;
      }
      case 'repeat': {
        const reach = this.exactCounts(node);
        const count = reach.findIndex((r, k) => k >= node.min && r[length] === 1);
        const unit = this.lengthsOf(node.node);
        let remaining = length;
        let text = '';
        for (let left = count - 1; left >= 0; left -= 1) {
          const rest = reach[left] ?? this.set([]);
          const pick = unit.findIndex((v, l) => v === 1 && l <= remaining && rest[remaining - l] === 1);
          text += this.build(node.node, pick);
          remaining -= pick;
        }
        return text;
      }
    }
  }

  private set(members: readonly number[]): Uint8Array {
    const out = new Uint8Array(this.cap + 1);
    for (const m of members) if (m <= this.cap) out[m] = 1;
    return out;
  }

  private convolve(a: Uint8Array, b: Uint8Array): Uint8Array {
    const out = new Uint8Array(this.cap + 1);
    const bs: number[] = [];
    b.forEach((v, j) => v === 1 && bs.push(j));
    a.forEach((v, i) => {
      if (v !== 1) return;
      for (const j of bs) {
        if (i + j > this.cap) break;
        out[i + j] = 1;
      }
    });
    return out;
  }
}

/**
 * A string of the same length as `valid` (or one longer/shorter, within [min, max]) that the
 * pattern rejects, or undefined when every nearby string matches.
 */
export function breakPattern(pattern: string, valid: string, min: number, max: number): string | undefined {
  const re = new RegExp(pattern, 'u');
  const chars = [...valid];
  const replacements = ['!', ' ', 'a', 'A', '0', '_', '-', '\n'];
  for (let i = 0; i < chars.length; i += 1) {
    for (const r of replacements) {
      const candidate = [...chars.slice(0, i), r, ...chars.slice(i + 1)].join('');
      if (!re.test(candidate)) return candidate;
    }
  }
  const longer = chars.length + 1 <= max ? replacements.map((r) => valid + r) : [];
  const shorter = chars.length - 1 >= min && chars.length > 0 ? [chars.slice(0, -1).join('')] : [];
  return [...longer, ...shorter].find((candidate) => !re.test(candidate));
}
