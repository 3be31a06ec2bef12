// The testkit's generated cases for one part of every tool's contract, judged by the catalog's own
// validators (`contractCases` of @gatehouse/sdk/testing, the same cases a pack's own tests run), as
// a check a pack author runs without a test runner.
import type { Catalog } from '@gatehouse/contracts';
import { contractCases, contractVerdict } from '@gatehouse/sdk/testing';
import type { ContractPart } from '@gatehouse/sdk/testing';

/** What running one part's cases over a catalog found. */
export interface CaseTally {
  /** Schemas the cases were generated for (tools that have this part). */
  readonly schemas: number;
  readonly valid: number;
  readonly invalid: number;
  /** One line per case the catalog judged otherwise, or schema the testkit cannot generate for, naming the tool. */
  readonly problems: readonly string[];
}

/** Generates the cases for `part` of every tool that has it and puts each through the catalog. */
export function runContractCases(catalog: Catalog, part: ContractPart): CaseTally {
  const { cases, schemas, problems } = contractCases(catalog, [part]);
  const judged = cases.flatMap((c) => {
    const got = contractVerdict(catalog, c);
    return got === c.expected ? [] : [`${c.tool} /${c.part}: ${c.kind} case "${c.name}" is ${got}; expected ${c.expected}`];
  });
  return {
    schemas: schemas[part],
    valid: cases.filter((c) => c.kind === 'valid').length,
    invalid: cases.filter((c) => c.kind === 'invalid').length,
    problems: [...problems, ...judged],
  };
}
