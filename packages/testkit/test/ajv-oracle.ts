import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { JsonSchema } from '@gatehouse/testkit';

/** Ajv in strict mode with all errors and the standard formats: the reference validator. */
function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  // ajv-formats is CommonJS; under NodeNext its default import is the module object.
  addFormats.default(ajv);
  return ajv;
}

function escapeToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The JSON pointer an Ajv error is about: for `required`, `additionalProperties` and
 * `unevaluatedProperties` the property itself (Ajv reports its parent), else `instancePath`.
 */
function errorPointer(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const property = params.missingProperty ?? params.additionalProperty ?? params.unevaluatedProperty;
  return typeof property === 'string' ? `${error.instancePath}/${escapeToken(property)}` : error.instancePath;
}

export interface Verdict {
  readonly valid: boolean;
  readonly pointers: readonly string[];
}

export function validator(schema: JsonSchema): (value: unknown) => Verdict {
  const validate = createAjv().compile(schema);
  return (value) => {
    const valid = validate(value);
    return { valid, pointers: (validate.errors ?? []).map(errorPointer) };
  };
}
