import { uniqueNames } from './case-names.js';
import type { Draft } from './case-names.js';
import { escapePointerToken, jsonEqual, jsonTypeOf } from './json-schema.js';
import type { JsonSchema, JsonType } from './json-schema.js';
import { MinimalValues } from './minimal-case.js';
import { NumberRules } from './number-rules.js';
import { outsideOf, primaryOf, wrongType } from './scalar-rule.js';
import type { BrokenRule } from './scalar-rule.js';
import { SchemaDocument } from './schema-shape.js';
import type { ArrayShape, ObjectShape, SchemaNode, UnionShape } from './schema-shape.js';
import { StringRules } from './string-rules.js';

/** A value that must be rejected, and where the rejection must point. */
export interface InvalidCase {
  readonly name: string;
  readonly value: unknown;
  /** JSON pointer the validator reports: the missing or unknown property itself, else the offending value. */
  readonly field: string;
  /** The JSON Schema keyword the value breaks (`required`, `pattern`, `discriminator`, …). */
  readonly keyword: string;
}

/** The property name used for the unknown-field case at every closed object. */
export const UNKNOWN_FIELD = 'zz_unknown_field';
const UNKNOWN_TAG = 'zz_unknown_kind';
/** Arrays longer than this get no "one past maxItems" case. */
const MAX_ARRAY_CASE_LENGTH = 1000;

interface InvalidDraft extends Draft {
  readonly value: unknown;
  readonly keyword: string;
}

/** Places a replacement for one location back into the whole document. */
type Place = (local: unknown) => unknown;

interface Walk {
  readonly pointer: string;
  readonly place: Place;
  readonly context: string | undefined;
  /** Resolved schema locations on the path, to stop optional recursion through `$ref`. */
  readonly stack: readonly string[];
}

/**
 * Invalid values derived from the minimal valid case by one mutation each, in a fixed order:
 * type, required, unknown field, then each property / element / branch depth-first.
 */
export function invalidCases(schema: JsonSchema): InvalidCase[] {
  const doc = new SchemaDocument(schema);
  const walker = new InvalidWalker(doc, new MinimalValues(doc));
  walker.visit(doc.root, walker.minimal.of(doc.root), { pointer: '', place: (v) => v, context: undefined, stack: [] });
  const names = uniqueNames(walker.drafts);
  return walker.drafts.map((d, i) => ({ name: names[i] ?? d.label, value: d.value, field: d.field, keyword: d.keyword }));
}

class InvalidWalker {
  readonly drafts: InvalidDraft[] = [];

  constructor(
    private readonly doc: SchemaDocument,
    readonly minimal: MinimalValues,
  ) {}

  visit(node: SchemaNode, local: unknown, walk: Walk): void {
    const shape = this.doc.shapeOf(node);
    const inner: Walk = { ...walk, stack: [...walk.stack, shape.at] };
    switch (shape.kind) {
      case 'object':
        return this.object(shape, asRecord(local), inner, undefined, true);
      case 'union':
        return this.union(shape, asRecord(local), inner);
      case 'array':
        return this.array(shape, Array.isArray(local) ? local : [], inner);
      case 'const':
        this.wrongType(shape.declaredTypes, jsonTypeOf(shape.value), local, inner);
        return this.add(inner, inner.pointer, {
          label: 'another value than the const',
          value: outsideOf([shape.value], 'zz_other_value'),
          keyword: 'const',
        });
      case 'enum':
        this.wrongType(shape.declaredTypes, jsonTypeOf(shape.values[0]), local, inner);
        return this.add(inner, inner.pointer, {
          label: 'value outside the enum',
          value: outsideOf(shape.values, 'zz_not_in_enum'),
          keyword: 'enum',
        });
      case 'string':
        this.wrongType(shape.declaredTypes, 'string', local, inner);
        return this.addAll(inner, new StringRules(shape).broken(typeof local === 'string' ? local : ''));
      case 'number':
      case 'integer':
        this.wrongType(shape.declaredTypes, shape.kind, local, inner);
        return this.addAll(inner, new NumberRules(shape).broken(typeof local === 'number' ? local : 0));
      case 'boolean':
      case 'null':
        return this.wrongType(shape.declaredTypes, shape.kind, local, inner);
    }
  }

  private object(
    shape: ObjectShape,
    local: Record<string, unknown>,
    walk: Walk,
    discriminator: string | undefined,
    withType: boolean,
  ): void {
    const { pointer, place } = walk;
    if (withType) this.wrongType(shape.declaredTypes, 'object', local, walk);
    for (const p of shape.properties) {
      if (!p.required) continue;
      const rest = Object.fromEntries(Object.entries(local).filter(([k]) => k !== p.name));
      this.add(walk, child(pointer, p.name), { label: 'required property missing', value: rest, keyword: 'required' });
    }
    if (shape.closedBy !== null) {
      const value = { ...local, [UNKNOWN_FIELD]: 'x' };
      this.add(walk, child(pointer, UNKNOWN_FIELD), { label: 'unknown field', value, keyword: shape.closedBy });
    }
    for (const p of shape.properties) {
      if (p.name === discriminator) continue;
      if (!p.required && walk.stack.includes(this.doc.resolve(p.node).at)) continue;
      const value = p.required ? local[p.name] : this.minimal.of(p.node);
      this.visit(p.node, value, { ...walk, pointer: child(pointer, p.name), place: (v) => place({ ...local, [p.name]: v }) });
    }
  }

  private union(shape: UnionShape, local: Record<string, unknown>, walk: Walk): void {
    const { pointer } = walk;
    const tag = shape.discriminator;
    const active = shape.branches.findIndex((b) => jsonEqual(b.tag, local[tag]));
    const baseOf = (i: number): Record<string, unknown> => {
      const branch = shape.branches[i];
      return i === active || branch === undefined ? local : this.minimal.object(branch.object);
    };
    const everyBranchTyped = shape.branches.every((b) => b.object.declaredTypes.length > 0);
    this.wrongType(shape.declaredTypes.length > 0 ? shape.declaredTypes : everyBranchTyped ? ['object'] : [], 'object', local, walk);

    const unknownTag = outsideOf(
      shape.branches.map((b) => b.tag),
      UNKNOWN_TAG,
    );
    const first = baseOf(Math.max(active, 0));
    this.add(walk, child(pointer, tag), {
      label: `unknown ${tag} ${JSON.stringify(unknownTag)}`,
      value: { ...first, [tag]: unknownTag },
      keyword: 'discriminator',
    });

    shape.branches.forEach((a, i) => {
      if (a.object.closedBy === null) return;
      const own = new Set(a.object.properties.map((p) => p.name));
      shape.branches.forEach((b, j) => {
        const foreign = b.object.properties.find((p) => p.required && p.name !== tag && !own.has(p.name));
        if (i === j || foreign === undefined || a.object.closedBy === null) return;
        const value = { ...baseOf(i), [foreign.name]: this.minimal.of(foreign.node) };
        const label = `${tag}=${tagText(a.tag)} mixed with ${foreign.name} of ${tag}=${tagText(b.tag)}`;
        this.add(walk, child(pointer, foreign.name), { label, value, keyword: a.object.closedBy });
      });
    });

    shape.branches.forEach((b, i) => {
      const context = `${pointer === '' ? '(root)' : pointer} ${tag}=${tagText(b.tag)}`;
      this.object(b.object, baseOf(i), { ...walk, context }, tag, false);
    });
  }

  private array(shape: ArrayShape, local: readonly unknown[], walk: Walk): void {
    const { pointer, place } = walk;
    const items = shape.items;
    const itemMinimal = (): unknown => (items === null ? null : this.minimal.of(items));
    this.wrongType(shape.declaredTypes, 'array', local, walk);
    if (shape.maxItems !== undefined && shape.maxItems + 1 <= MAX_ARRAY_CASE_LENGTH) {
      const length = shape.maxItems + 1;
      const value = Array.from({ length }, (_, i) => (i < local.length ? local[i] : itemMinimal()));
      this.add(walk, pointer, { label: `one past maxItems ${shape.maxItems} (${length} items)`, value, keyword: 'maxItems' });
    }
    if (shape.minItems >= 1) {
      const length = shape.minItems - 1;
      this.add(walk, pointer, {
        label: `one under minItems ${shape.minItems} (${length} items)`,
        value: local.slice(0, length),
        keyword: 'minItems',
      });
    }
    if (items === null) return;
    const roomForOne = shape.maxItems === undefined || shape.maxItems >= 1;
    if (local.length === 0 && (!roomForOne || walk.stack.includes(this.doc.resolve(items).at))) return;
    const base = local.length > 0 ? local : [itemMinimal()];
    this.visit(items, base[0], { ...walk, pointer: child(pointer, '0'), place: (v) => place([v, ...base.slice(1)]) });
  }

  private wrongType(declared: readonly JsonType[], primary: JsonType, minimal: unknown, walk: Walk): void {
    const rule = wrongType(declared, primaryOf(declared, primary), minimal);
    if (rule !== undefined) this.add(walk, walk.pointer, rule);
  }

  private addAll(walk: Walk, rules: readonly BrokenRule[]): void {
    for (const rule of rules) this.add(walk, walk.pointer, rule);
  }

  /** Records `rule.value` (a replacement for the walk's location) placed into the whole document. */
  private add(walk: Walk, field: string, rule: BrokenRule): void {
    this.drafts.push({ label: rule.label, field, context: walk.context, value: walk.place(rule.value), keyword: rule.keyword });
  }
}

function child(pointer: string, token: string): string {
  return `${pointer}/${escapePointerToken(token)}`;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function tagText(tag: unknown): string {
  return typeof tag === 'string' ? tag : JSON.stringify(tag);
}
