import { uniqueNames } from './case-names.js';
import type { Draft } from './case-names.js';
import { escapePointerToken, jsonEqual } from './json-schema.js';
import type { JsonSchema } from './json-schema.js';
import { MinimalValues } from './minimal-case.js';
import { NumberRules } from './number-rules.js';
import type { ScalarRule } from './scalar-rule.js';
import { SchemaDocument } from './schema-shape.js';
import type { ArrayShape, ObjectShape, SchemaNode, UnionShape } from './schema-shape.js';
import { StringRules } from './string-rules.js';

/** A value that must be accepted. */
export interface ValidCase {
  readonly name: string;
  readonly value: unknown;
}

/** Arrays longer than this get no "exactly maxItems" case. */
const MAX_ARRAY_CASE_LENGTH = 1000;

interface ValidDraft extends Draft {
  readonly value: unknown;
}

interface Walk {
  readonly pointer: string;
  readonly place: (local: unknown) => unknown;
  readonly context: string | undefined;
  readonly stack: readonly string[];
}

/**
 * Valid values at the exact limits of every location reached from the minimal case: length and
 * numeric bounds, item counts, each union branch, each enum value, `null` where allowed, and each
 * object with all its optional properties present.
 */
export function boundaryValidCases(schema: JsonSchema): ValidCase[] {
  const doc = new SchemaDocument(schema);
  const walker = new BoundaryWalker(doc, new MinimalValues(doc));
  walker.visit(doc.root, walker.minimal.of(doc.root), { pointer: '', place: (v) => v, context: undefined, stack: [] });
  const names = uniqueNames(walker.drafts);
  return walker.drafts.map((d, i) => ({ name: names[i] ?? d.label, value: d.value }));
}

class BoundaryWalker {
  readonly drafts: ValidDraft[] = [];

  constructor(
    private readonly doc: SchemaDocument,
    readonly minimal: MinimalValues,
  ) {}

  visit(node: SchemaNode, local: unknown, walk: Walk): void {
    const shape = this.doc.shapeOf(node);
    const inner: Walk = { ...walk, stack: [...walk.stack, shape.at] };
    const nullable = shape.declaredTypes.includes('null') && shape.kind !== 'null' && shape.kind !== 'const' && shape.kind !== 'enum';
    if (nullable) this.add(inner, { label: 'null (type allows null)', value: null });
    switch (shape.kind) {
      case 'object':
        return this.object(shape, asRecord(local), inner, undefined);
      case 'union':
        return this.union(shape, asRecord(local), inner);
      case 'array':
        return this.array(shape, Array.isArray(local) ? local : [], inner);
      case 'enum':
        return shape.values.forEach((value) => this.add(inner, { label: `enum value ${JSON.stringify(value)}`, value }));
      case 'string':
        return new StringRules(shape).boundaries().forEach((rule) => this.add(inner, rule));
      case 'number':
      case 'integer':
        return new NumberRules(shape).boundaries().forEach((rule) => this.add(inner, rule));
      case 'boolean':
        return this.add(inner, { label: `${String(local !== true)} (the other boolean)`, value: local !== true });
      case 'const':
      case 'null':
        return;
    }
  }

  private object(shape: ObjectShape, local: Record<string, unknown>, walk: Walk, discriminator: string | undefined): void {
    const optional = shape.properties.filter((p) => !p.required && !walk.stack.includes(this.doc.resolve(p.node).at));
    if (optional.length > 0) {
      const full = { ...local };
      for (const p of optional) full[p.name] = this.minimal.of(p.node);
      this.add(walk, { label: 'all optional properties present', value: full });
    }
    for (const p of shape.properties) {
      if (p.name === discriminator || (!p.required && !optional.includes(p))) continue;
      const value = p.required ? local[p.name] : this.minimal.of(p.node);
      const pointer = `${walk.pointer}/${escapePointerToken(p.name)}`;
      this.visit(p.node, value, { ...walk, pointer, place: (v) => walk.place({ ...local, [p.name]: v }) });
    }
  }

  private union(shape: UnionShape, local: Record<string, unknown>, walk: Walk): void {
    const tag = shape.discriminator;
    shape.branches.forEach((b) => {
      const base = jsonEqual(b.tag, local[tag]) ? local : this.minimal.object(b.object);
      const tagText = typeof b.tag === 'string' ? b.tag : JSON.stringify(b.tag);
      this.add(walk, { label: `branch ${tag}=${tagText} minimal`, value: base });
      const context = `${walk.pointer === '' ? '(root)' : walk.pointer} ${tag}=${tagText}`;
      this.object(b.object, base, { ...walk, context }, tag);
    });
  }

  private array(shape: ArrayShape, local: readonly unknown[], walk: Walk): void {
    const items = shape.items;
    const itemMinimal = (): unknown => (items === null ? null : this.minimal.of(items));
    const ofLength = (length: number): unknown[] => Array.from({ length }, (_, i) => (i < local.length ? local[i] : itemMinimal()));
    if (shape.minItems >= 1) this.add(walk, { label: `minItems ${shape.minItems}`, value: ofLength(shape.minItems) });
    if (shape.maxItems !== undefined && shape.maxItems <= MAX_ARRAY_CASE_LENGTH) {
      this.add(walk, { label: `maxItems ${shape.maxItems}`, value: ofLength(shape.maxItems) });
    }
    if (items === null) return;
    const roomForOne = shape.maxItems === undefined || shape.maxItems >= 1;
    if (local.length === 0 && (!roomForOne || walk.stack.includes(this.doc.resolve(items).at))) return;
    const base = local.length > 0 ? local : [itemMinimal()];
    this.visit(items, base[0], { ...walk, pointer: `${walk.pointer}/0`, place: (v) => walk.place([v, ...base.slice(1)]) });
  }

  private add(walk: Walk, rule: ScalarRule): void {
    this.drafts.push({ label: rule.label, field: walk.pointer, context: walk.context, value: walk.place(rule.value) });
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
