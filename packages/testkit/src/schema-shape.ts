import { ANNOTATION_KEYWORDS, ASSERTION_KEYWORDS, escapePointerToken, JsonType, unescapePointerToken } from './json-schema.js';
import type { JsonSchema } from './json-schema.js';
import { UnsupportedSchemaError } from './unsupported-schema-error.js';

/** A schema together with its location in the root document (`#/properties/x`). */
export interface SchemaNode {
  readonly schema: JsonSchema;
  readonly at: string;
}

interface PropertyShape {
  readonly name: string;
  readonly node: SchemaNode;
  readonly required: boolean;
}

type ClosingKeyword = 'additionalProperties' | 'unevaluatedProperties';

export interface ObjectShape {
  readonly kind: 'object';
  readonly at: string;
  readonly declaredTypes: readonly JsonType[];
  readonly properties: readonly PropertyShape[];
  readonly closedBy: ClosingKeyword | null;
}

interface BranchShape {
  readonly tag: unknown;
  readonly object: ObjectShape;
}

export interface UnionShape {
  readonly kind: 'union';
  readonly at: string;
  readonly declaredTypes: readonly JsonType[];
  readonly keyword: 'oneOf' | 'anyOf';
  readonly discriminator: string;
  readonly branches: readonly BranchShape[];
}

export interface ArrayShape {
  readonly kind: 'array';
  readonly at: string;
  readonly declaredTypes: readonly JsonType[];
  readonly items: SchemaNode | null;
  readonly minItems: number;
  readonly maxItems: number | undefined;
}

export interface ScalarShape {
  readonly kind: 'string' | 'number' | 'integer' | 'boolean' | 'null';
  readonly at: string;
  readonly declaredTypes: readonly JsonType[];
  readonly schema: JsonSchema;
}

interface ConstShape {
  readonly kind: 'const';
  readonly at: string;
  readonly declaredTypes: readonly JsonType[];
  readonly value: unknown;
}

interface EnumShape {
  readonly kind: 'enum';
  readonly at: string;
  readonly declaredTypes: readonly JsonType[];
  readonly values: readonly unknown[];
}

export type Shape = ObjectShape | UnionShape | ArrayShape | ScalarShape | ConstShape | EnumShape;

const JSON_TYPES: ReadonlySet<string> = new Set(Object.values(JsonType));
const MAX_REF_HOPS = 32;

/** Reads one root schema: resolves local `$ref`s and describes each location as a `Shape`. */
export class SchemaDocument {
  readonly root: SchemaNode;

  constructor(schema: JsonSchema) {
    this.root = { schema, at: '#' };
  }

  child(node: SchemaNode, schema: JsonSchema, ...path: string[]): SchemaNode {
    return { schema, at: `${node.at}/${path.map(escapePointerToken).join('/')}` };
  }

  /** Follows `$ref` until a schema without one. */
  resolve(node: SchemaNode): SchemaNode {
    let current = node;
    for (let hops = 0; current.schema.$ref !== undefined; hops += 1) {
      if (hops >= MAX_REF_HOPS) throw new UnsupportedSchemaError(node.at, '$ref chain too long or circular');
      const siblings = Object.keys(current.schema).filter((k) => k !== '$ref' && ASSERTION_KEYWORDS.has(k));
      if (siblings.length > 0) {
        throw new UnsupportedSchemaError(current.at, `$ref with sibling assertions (${siblings.join(', ')})`);
      }
      current = this.lookup(current.schema.$ref, current.at);
    }
    return current;
  }

  shapeOf(input: SchemaNode): Shape {
    const node = this.resolve(input);
    const { schema, at } = node;
    for (const keyword of Object.keys(schema)) {
      if (!ASSERTION_KEYWORDS.has(keyword) && !ANNOTATION_KEYWORDS.has(keyword)) {
        throw new UnsupportedSchemaError(at, `keyword "${keyword}" is outside the supported subset`);
      }
    }
    const declaredTypes = this.declaredTypes(node);
    if (schema.oneOf !== undefined || schema.anyOf !== undefined) return this.unionShape(node, declaredTypes);
    if ('const' in schema) return { kind: 'const', at, declaredTypes, value: schema.const };
    if (schema.enum !== undefined) {
      if (schema.enum.length === 0) throw new UnsupportedSchemaError(at, 'empty enum');
      return { kind: 'enum', at, declaredTypes, values: schema.enum };
    }
    const primary = primaryType(declaredTypes.length > 0 ? declaredTypes : inferTypes(schema));
    if (primary === undefined) throw new UnsupportedSchemaError(at, 'no `type` and none can be inferred');
    switch (primary) {
      case 'object':
        return this.objectShape(node, declaredTypes);
      case 'array':
        return {
          kind: 'array',
          at,
          declaredTypes,
          items: schema.items === undefined ? null : this.child(node, schema.items, 'items'),
          minItems: schema.minItems ?? 0,
          maxItems: schema.maxItems,
        };
      default:
        return { kind: primary, at, declaredTypes, schema };
    }
  }

  private objectShape(node: SchemaNode, declaredTypes: readonly JsonType[]): ObjectShape {
    const { schema, at } = node;
    const required = new Set(schema.required ?? []);
    const properties = Object.entries(schema.properties ?? {}).map(([name, child]) => ({
      name,
      node: this.child(node, child, 'properties', name),
      required: required.has(name),
    }));
    for (const name of required) {
      if (!properties.some((p) => p.name === name)) {
        throw new UnsupportedSchemaError(at, `required property "${name}" has no schema in \`properties\``);
      }
    }
    const closedBy: ClosingKeyword | null =
      schema.additionalProperties === false
        ? 'additionalProperties'
        : schema.unevaluatedProperties === false
          ? 'unevaluatedProperties'
          : null;
    return { kind: 'object', at, declaredTypes, properties, closedBy };
  }

  private unionShape(node: SchemaNode, declaredTypes: readonly JsonType[]): UnionShape {
    const { schema, at } = node;
    if (schema.oneOf !== undefined && schema.anyOf !== undefined) {
      throw new UnsupportedSchemaError(at, 'both oneOf and anyOf');
    }
    const keyword = schema.oneOf !== undefined ? 'oneOf' : 'anyOf';
    const list = schema.oneOf ?? schema.anyOf ?? [];
    if (list.length === 0) throw new UnsupportedSchemaError(at, `empty ${keyword}`);
    const hasOwnObjectKeywords = ['properties', 'required', 'additionalProperties', 'unevaluatedProperties'].some((k) => k in schema);
    const parent = hasOwnObjectKeywords ? this.objectShape(node, declaredTypes) : null;
    const objects = list.map((branch, i) => {
      const shape = this.shapeOf(this.child(node, branch, keyword, String(i)));
      if (shape.kind !== 'object') {
        throw new UnsupportedSchemaError(`${at}/${keyword}/${i}`, 'union branches must be objects with a discriminator');
      }
      return parent === null ? shape : mergeObjects(parent, shape);
    });
    const discriminator = this.findDiscriminator(objects, at);
    const branches = objects.map((object) => ({ object, tag: this.tagOf(object, discriminator) }));
    const tags = branches.map((b) => JSON.stringify(b.tag));
    if (new Set(tags).size !== tags.length) {
      throw new UnsupportedSchemaError(at, `discriminator "${discriminator}" repeats a value across branches`);
    }
    return { kind: 'union', at, declaredTypes, keyword, discriminator, branches };
  }

  private findDiscriminator(objects: readonly ObjectShape[], at: string): string {
    const first = objects[0];
    const candidates = (first?.properties ?? [])
      .map((p) => p.name)
      .filter((name) => objects.every((o) => this.tagOf(o, name) !== undefined));
    const chosen = candidates.includes('kind') ? 'kind' : candidates[0];
    if (chosen === undefined) {
      throw new UnsupportedSchemaError(at, 'union without a discriminator (a required property with `const` in every branch)');
    }
    return chosen;
  }

  private tagOf(object: ObjectShape, name: string): unknown {
    const property = object.properties.find((p) => p.name === name && p.required);
    if (property === undefined) return undefined;
    const schema = this.resolve(property.node).schema;
    if ('const' in schema) return schema.const;
    if (schema.enum?.length === 1) return schema.enum[0];
    return undefined;
  }

  private declaredTypes(node: SchemaNode): readonly JsonType[] {
    const raw = node.schema.type;
    if (raw === undefined) return [];
    const list = typeof raw === 'string' ? [raw] : raw;
    return list.map((t) => {
      if (!JSON_TYPES.has(t)) throw new UnsupportedSchemaError(node.at, `unknown type "${t}"`);
      return t as JsonType;
    });
  }

  private lookup(ref: string, from: string): SchemaNode {
    if (!ref.startsWith('#')) throw new UnsupportedSchemaError(from, `$ref "${ref}" is not local to the document`);
    const tokens = ref === '#' ? [] : ref.slice(2).split('/').map(unescapePointerToken);
    let current: unknown = this.root.schema;
    for (const token of tokens) {
      current = typeof current === 'object' && current !== null ? (current as Record<string, unknown>)[token] : undefined;
    }
    if (typeof current !== 'object' || current === null) {
      throw new UnsupportedSchemaError(from, `$ref "${ref}" does not resolve`);
    }
    return { schema: current as JsonSchema, at: ref };
  }
}

function mergeObjects(parent: ObjectShape, branch: ObjectShape): ObjectShape {
  const byName = new Map<string, PropertyShape>();
  for (const p of [...parent.properties, ...branch.properties]) {
    const previous = byName.get(p.name);
    byName.set(p.name, { name: p.name, node: p.node, required: p.required || (previous?.required ?? false) });
  }
  return {
    kind: 'object',
    at: branch.at,
    declaredTypes: branch.declaredTypes.length > 0 ? branch.declaredTypes : parent.declaredTypes,
    properties: [...byName.values()],
    closedBy: branch.closedBy ?? parent.closedBy,
  };
}

function primaryType(types: readonly JsonType[]): JsonType | undefined {
  return types.find((t) => t !== 'null') ?? types[0];
}

function inferTypes(schema: JsonSchema): readonly JsonType[] {
  const has = (...keywords: string[]): boolean => keywords.some((k) => k in schema);
  if (has('properties', 'required', 'additionalProperties', 'unevaluatedProperties')) return ['object'];
  if (has('items', 'minItems', 'maxItems')) return ['array'];
  if (has('minLength', 'maxLength', 'pattern', 'format')) return ['string'];
  if (has('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf')) return ['number'];
  return [];
}
