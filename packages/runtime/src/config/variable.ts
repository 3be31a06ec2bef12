import type { Component } from './component.js';
import type { Parsed, ValueKind } from './value-kind.js';

/** One environment variable of the schema: who reads it, how it parses, what unset means, what it is for. */
export interface Variable<T, R extends readonly Component[] = readonly Component[]> {
  readonly readers: R;
  /** One line for the configuration table's "meaning" column. */
  readonly doc: string;
  /** The configuration table's "values" column. */
  readonly values: string;
  /** The configuration table's "default" column: `` `8091` ``, *(required)*, or how a service derives it. */
  readonly defaultText: string;
  /** The default as environment text, when there is a fixed one. */
  readonly default: string | undefined;
  /** Never echoed in a refusal: it may carry a password or token. */
  readonly secret: boolean;
  /** The value of a set, non-empty variable, or why it is refused. */
  readonly parse: (raw: string) => Parsed<T>;
  /** The value when the variable is unset or empty, or why that is refused (a required variable). */
  readonly unset: Parsed<T>;
  /** Readers for which unset is refused even though `unset` allows it: this is why. */
  readonly requiredFor?: { readonly readers: readonly Component[]; readonly reason: string };
}

interface Spec<R extends readonly Component[]> {
  readonly readers: R;
  readonly doc: string;
  readonly secret?: boolean;
}

/** A fixed default, written as environment text and parsed once, here. */
interface DefaultSpec<R extends readonly Component[]> extends Spec<R> {
  readonly default: string;
  /** Overrides the configuration table's default column, e.g. to add "(7 days)". */
  readonly defaultText?: string;
}

/** No default: unset is refused, saying why the variable is needed. */
interface RequiredSpec<R extends readonly Component[]> extends Spec<R> {
  readonly required: string;
}

/** Unset stays `undefined`; the reader derives the value and `unset` says how, for the configuration table. */
interface DerivedSpec<R extends readonly Component[]> extends Spec<R> {
  readonly unset: string;
}

/** Required by some of its readers, optional (unset stays `undefined`) for the others. */
interface RequiredForSpec<R extends readonly Component[]> extends Spec<R> {
  readonly requiredFor: readonly R[number][];
  readonly required: string;
}

export function variable<T, const R extends readonly Component[]>(kind: ValueKind<T>, spec: DefaultSpec<R>): Variable<T, R>;
export function variable<T, const R extends readonly Component[]>(kind: ValueKind<T>, spec: RequiredForSpec<R>): Variable<T | undefined, R>;
export function variable<T, const R extends readonly Component[]>(kind: ValueKind<T>, spec: RequiredSpec<R>): Variable<T, R>;
export function variable<T, const R extends readonly Component[]>(kind: ValueKind<T>, spec: DerivedSpec<R>): Variable<T | undefined, R>;
export function variable<T, const R extends readonly Component[]>(
  kind: ValueKind<T>,
  spec: DefaultSpec<R> | RequiredForSpec<R> | RequiredSpec<R> | DerivedSpec<R>,
): Variable<T | undefined, R> {
  const base = { readers: spec.readers, doc: spec.doc, values: kind.describe, secret: spec.secret ?? false, parse: kind.parse };
  if ('default' in spec) {
    const unset = kind.parse(spec.default);
    if (!unset.ok) throw new Error(`the schema's default "${spec.default}" is refused: ${unset.reason}`);
    const shown = spec.default === '' ? '*(empty)*' : `\`${spec.default}\``;
    return { ...base, default: spec.default, defaultText: spec.defaultText ?? shown, unset };
  }
  if ('requiredFor' in spec) {
    const defaultText = `*(required by ${spec.requiredFor.join(', ')})*`;
    return {
      ...base,
      default: undefined,
      defaultText,
      unset: { ok: true, value: undefined },
      requiredFor: { readers: spec.requiredFor, reason: spec.required },
    };
  }
  if ('required' in spec) {
    return { ...base, default: undefined, defaultText: '*(required)*', unset: { ok: false, reason: `required: ${spec.required}` } };
  }
  return { ...base, default: undefined, defaultText: spec.unset, unset: { ok: true, value: undefined } };
}
