import { toolError, ToolFailure } from '@gatehouse/sdk';
import type { SchemaType } from '@gatehouse/sdk';
import type { address } from './schema-parts.js';

/** A JSON object of an upstream body, not yet trusted field by field. */
export type Body = Readonly<Record<string, unknown>>;

export type Address = SchemaType<typeof address>;

export const isBody = (value: unknown): value is Body => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The named fields of an object, and nothing else (the view never carries what the service adds); undefined if not an object. */
export function pick(value: unknown, fields: readonly string[]): Body | undefined {
  return isBody(value) ? Object.fromEntries(fields.filter((f) => f in value).map((f) => [f, value[f]])) : undefined;
}

/** A postal address of the customers service, reduced to the view's fields; undefined when it has another shape. */
export function readAddress(value: unknown): Address | undefined {
  if (!isBody(value)) return undefined;
  const { line1, city, country, postal_code: postalCode } = value;
  if (typeof line1 !== 'string' || typeof city !== 'string' || typeof country !== 'string') return undefined;
  if (typeof postalCode !== 'string' && postalCode !== null) return undefined;
  return { line1, city, country, postal_code: postalCode };
}

export function readStrings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v): v is string => typeof v === 'string') ? value : undefined;
}

/** Reads an upstream body, failing (ambiguously, for writes) when its shape is not the documented one. */
export function expectShape<T>(body: unknown, check: (b: Body) => T | undefined, write: boolean): T {
  const value = isBody(body) ? check(body) : undefined;
  if (value === undefined) {
    throw new ToolFailure(toolError('UPSTREAM_ERROR', 'the customers service answered with an unexpected shape', { retryable: !write }), {
      ambiguous: write,
    });
  }
  return value;
}
