import { NumberRules } from './number-rules.js';
import type { JsonSchema } from './json-schema.js';
import { SchemaDocument } from './schema-shape.js';
import type { ObjectShape, SchemaNode } from './schema-shape.js';
import { StringRules } from './string-rules.js';
import { UnsupportedSchemaError } from './unsupported-schema-error.js';

/** Nesting of required values beyond this is taken as endless recursion through `$ref`. */
const MAX_REQUIRED_DEPTH = 64;

/**
 * The smallest valid value: required properties only, the first union branch, `minItems` elements,
 * scalars at their lower limits — or the location's `examples[0]` when it satisfies the limits.
 */
export function minimalValidCase(schema: JsonSchema): unknown {
  const doc = new SchemaDocument(schema);
  return new MinimalValues(doc).of(doc.root);
}

/** Builds the smallest valid value of each location: required properties only, first union branch. */
export class MinimalValues {
  constructor(private readonly doc: SchemaDocument) {}

  of(node: SchemaNode, depth = 0): unknown {
    if (depth > MAX_REQUIRED_DEPTH) throw new UnsupportedSchemaError(node.at, 'required values recurse without end');
    const shape = this.doc.shapeOf(node);
    const example = node.schema.examples?.[0] ?? this.doc.resolve(node).schema.examples?.[0];
    switch (shape.kind) {
      case 'object':
        return this.object(shape, depth);
      case 'union': {
        const first = shape.branches[0];
        if (first === undefined) throw new UnsupportedSchemaError(shape.at, 'empty union');
        return this.object(first.object, depth);
      }
      case 'array': {
        const items = shape.items;
        return Array.from({ length: shape.minItems }, () => (items === null ? null : this.of(items, depth + 1)));
      }
      case 'const':
        return shape.value;
      case 'enum':
        return shape.values[0];
      case 'string': {
        const rules = new StringRules(shape);
        return rules.accepts(example) ? example : rules.minimal();
      }
      case 'number':
      case 'integer': {
        const rules = new NumberRules(shape);
        return rules.accepts(example) ? example : rules.minimal();
      }
      case 'boolean':
        return typeof example === 'boolean' ? example : false;
      case 'null':
        return null;
    }
  }

  object(shape: ObjectShape, depth = 0): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const p of shape.properties) {
      if (p.required) out[p.name] = this.of(p.node, depth + 1);
    }
    return out;
  }
}
