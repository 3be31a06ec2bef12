import { boundaryValidCases } from './boundary-cases.js';
import { invalidCases } from './invalid-cases.js';
import type { JsonSchema } from './json-schema.js';
import { minimalValidCase } from './minimal-case.js';

export interface CaseCounts {
  /** The minimal case plus every boundary case. */
  readonly valid: number;
  readonly invalid: number;
}

export function caseCounts(schema: JsonSchema): CaseCounts {
  minimalValidCase(schema);
  return { valid: 1 + boundaryValidCases(schema).length, invalid: invalidCases(schema).length };
}
