// `gatehouse pack check`: the contract tests of a tool pack, without any server. The pack is loaded
// and hosted as every service hosts it (shape, configuration, tools, schema lint, roles, policy
// table), then its per-role snapshot is taken (and compared to a pinned one), the testkit's cases
// are put through the catalog's validators, and every output schema is checked closed. No handler runs.
import { readFileSync } from 'node:fs';
import type { Catalog } from '@gatehouse/contracts';
import { lintSchema, snapshotByRole, snapshotJson } from '@gatehouse/contracts';
import { hostToolPack, loadToolPack } from '@gatehouse/runtime';
import type { HostedPack } from '@gatehouse/runtime';
import { describePack, readPackConfig } from '@gatehouse/sdk';
import type { ToolPack } from '@gatehouse/sdk';
import { runContractCases } from './contract-cases.js';
import type { Env } from './io.js';
import { pathHint } from './pack-choice.js';
import type { DocumentOverrides } from './pack-choice.js';
import { documentsInForce, packFailure, PackPart } from './pack-failure.js';
import type { PackProblem } from './pack-failure.js';
import { snapshotDifferences } from './snapshot-diff.js';

/** Every check, in the order they run and print. */
const PACK_CHECKS = [
  'load',
  'shape',
  'config',
  'tools',
  'schema lint',
  'roles',
  'policy table',
  'snapshot',
  'input cases',
  'proposal cases',
  'output schemas',
] as const;
type PackCheckName = (typeof PACK_CHECKS)[number];

const CheckResult = { ok: 'ok', failed: 'failed', skipped: 'skipped' } as const;
type CheckResult = (typeof CheckResult)[keyof typeof CheckResult];

export interface CheckRow {
  readonly check: PackCheckName;
  readonly result: CheckResult;
  /** What was checked (variables, tools, roles, rules, cases, schemas); null when not counted. */
  readonly count: number | null;
  readonly detail: string;
  /** Every problem found, one line each. */
  readonly problems: readonly string[];
}

export interface PackCheckReport {
  /** The pack as named on the command line. */
  readonly pack: string;
  /** Its name, once loaded. */
  readonly name: string | null;
  readonly ok: boolean;
  readonly checks: readonly CheckRow[];
  /** `snapshotJson` of the per-role snapshot, once the pack is hosted. */
  readonly snapshot: string | null;
}

export interface PackCheckInput {
  readonly pack: string;
  readonly env: Env;
  readonly overrides: DocumentOverrides;
  /** A checked-in snapshot to compare with: its path and text. */
  readonly pinnedSnapshot?: { readonly file: string; readonly text: string } | undefined;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The rows as they are filled in; a check never reached is skipped, naming the one that stopped the run. */
class Rows {
  readonly #rows = new Map<PackCheckName, CheckRow>();

  ok(check: PackCheckName, count: number | null, detail: string): void {
    this.#rows.set(check, { check, result: CheckResult.ok, count, detail, problems: [] });
  }

  /** `ok` when there is no problem, else failed with every problem (the detail shows the first). */
  judge(check: PackCheckName, count: number | null, detail: string, problems: readonly string[]): void {
    if (problems.length === 0) this.ok(check, count, detail);
    else this.fail(check, problems, count);
  }

  fail(check: PackCheckName, problems: readonly string[], count: number | null = null): void {
    const [first = 'failed'] = problems;
    const more = problems.length > 1 ? ` (and ${plural(problems.length - 1, 'more problem')})` : '';
    this.#rows.set(check, { check, result: CheckResult.failed, count, detail: `${first}${more}`, problems });
  }

  skip(check: PackCheckName, detail: string): void {
    this.#rows.set(check, { check, result: CheckResult.skipped, count: null, detail, problems: [] });
  }

  report(pack: string, name: string | null, snapshot: string | null): PackCheckReport {
    const stopper = PACK_CHECKS.find((check) => this.#rows.get(check)?.result === CheckResult.failed);
    const checks = PACK_CHECKS.map(
      (check) =>
        this.#rows.get(check) ?? {
          check,
          result: CheckResult.skipped,
          count: null,
          detail: `not run: ${stopper ?? 'an earlier check'} failed`,
          problems: [],
        },
    );
    return { pack, name, ok: checks.every((row) => row.result !== CheckResult.failed), checks, snapshot };
  }
}

const texts = (problems: readonly PackProblem[], ...parts: readonly PackPart[]): string[] =>
  problems.filter((p) => parts.includes(p.part)).map((p) => p.text);

/** A document the pack is hosted with, readable and JSON; its problem otherwise. */
function documentProblem(file: string | undefined, what: string): string | undefined {
  if (file === undefined) return `the ${what} is not a file`;
  try {
    JSON.parse(readFileSync(file, 'utf8'));
    return undefined;
  } catch (error) {
    return `${file}: the ${what} cannot be read: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * A host that failed: each validator problem on the row of its part. validatePack checks the roles
 * and the policy table only once the catalog loads, so with schema problems they were not checked.
 */
function judgeHostFailure(rows: Rows, problems: readonly PackProblem[]): void {
  const schemaProblems = texts(problems, PackPart.schemas);
  const setupThrew = problems.some((p) => p.part === PackPart.setup);
  rows.judge(
    'tools',
    null,
    'setup ran; one implementation per address; every preview proposes',
    texts(problems, PackPart.setup, PackPart.tools, PackPart.shape, PackPart.config, PackPart.load),
  );
  // Nothing after setup ran when it threw: those rows stay "not run".
  if (setupThrew) return;
  rows.judge('schema lint', null, 'the catalog loads: closed objects, discriminated unions, pairs, compiled schemas', schemaProblems);
  for (const [check, part] of [
    ['roles', PackPart.roles],
    ['policy table', PackPart.policyTable],
  ] as const) {
    const found = texts(problems, part);
    if (found.length > 0) rows.fail(check, found);
    else if (schemaProblems.length > 0) rows.skip(check, 'not run: checked once the catalog loads');
    else rows.ok(check, null, 'checked against the catalog');
  }
}

function schemaCount(catalog: Catalog): number {
  return catalog.tools().reduce((sum, tool) => sum + 2 + (tool.proposal === undefined ? 0 : 1), 0);
}

/** The checks that need the hosted pack: its parts, the snapshot, the generated cases, the output schemas. */
function judgeHosted(rows: Rows, hosted: HostedPack, input: PackCheckInput): string {
  const { catalog } = hosted;
  const tools = catalog.tools();
  const retired = tools.filter((t) => t.retired === true).length;
  rows.ok(
    'tools',
    tools.length,
    `${tools.length - retired} live, ${retired} retired; setup ran once, one implementation per address, every preview proposes`,
  );
  rows.ok('schema lint', schemaCount(catalog), 'input, output and proposal schemas: closed objects, discriminated unions, pairs; compiled');
  rows.ok('roles', Object.keys(hosted.roles).length, hosted.rolesFile);
  rows.ok('policy table', hosted.policyTable.rules.length, hosted.policyTableFile);

  const snapshot = snapshotByRole(catalog, Object.fromEntries(Object.entries(hosted.roles).map(([name, role]) => [name, role.tools])));
  const text = snapshotJson(snapshot);
  const roles = Object.keys(snapshot).length;
  const pinned = input.pinnedSnapshot;
  if (pinned === undefined) rows.ok('snapshot', roles, 'per role; print it with --snapshot, pin it with --snapshot-file');
  else
    rows.judge(
      'snapshot',
      roles,
      `same as ${pinned.file}`,
      snapshotDifferences(pinned.text, snapshot, text).map((d) => `${pinned.file}: ${d}`),
    );

  const inputs = runContractCases(catalog, 'input');
  rows.judge(
    'input cases',
    inputs.valid + inputs.invalid,
    `${inputs.invalid} invalid refused at their field, ${inputs.valid} valid accepted; ${plural(inputs.schemas, 'schema')}`,
    inputs.problems,
  );
  const proposals = runContractCases(catalog, 'proposal');
  const proposalDetail =
    proposals.schemas === 0
      ? 'no commit has a proposal schema'
      : `${proposals.invalid} invalid refused at their field, ${proposals.valid} valid accepted; ${plural(proposals.schemas, 'schema')}`;
  rows.judge('proposal cases', proposals.valid + proposals.invalid, proposalDetail, proposals.problems);

  const outputs = runContractCases(catalog, 'output');
  const open = tools.flatMap((tool) => lintSchema(tool.output, '/output').map((problem) => `${tool.address} ${problem}`));
  rows.judge(
    'output schemas',
    outputs.schemas,
    `closed and compiled; ${outputs.invalid} invalid results refused, ${outputs.valid} valid accepted`,
    [...open, ...outputs.problems],
  );
  return text;
}

/** Runs every check it can reach; a check that cannot run (its inputs failed) is skipped. Never throws for a bad pack. */
export async function checkPack(input: PackCheckInput): Promise<PackCheckReport> {
  const rows = new Rows();
  let pack: ToolPack;
  try {
    pack = await loadToolPack(input.pack, process.cwd());
  } catch (error) {
    rows.fail(
      'load',
      packFailure(error, undefined, pathHint(input.pack)).problems.map((p) => p.text),
    );
    return rows.report(input.pack, null, null);
  }
  rows.ok('load', 1, `pack ${pack.name}`);
  try {
    const description = describePack(pack);
    const documents = ['roles', 'policy table', ...(description.approvers === null ? [] : ['approvers'])].join(', ');
    rows.ok('shape', description.variables.length, `name, ${plural(description.variables.length, 'variable')}, ${documents}`);
  } catch (error) {
    rows.fail(
      'shape',
      packFailure(error).problems.map((p) => p.text),
    );
    return rows.report(input.pack, null, null);
  }
  try {
    readPackConfig(pack, input.env);
    const variables = Object.entries(pack.config);
    const set = variables.filter(([name]) => (input.env[name] ?? '') !== '').length;
    const defaulted = variables.filter(([name, variable]) => (input.env[name] ?? '') === '' && variable.default !== undefined).length;
    rows.ok(
      'config',
      variables.length,
      `read as a service reads them: ${set} set, ${defaulted} from defaults, ${variables.length - set - defaulted} unset`,
    );
  } catch (error) {
    rows.fail(
      'config',
      packFailure(error).problems.map((p) => p.text),
    );
    return rows.report(input.pack, pack.name, null);
  }
  const documents = documentsInForce(pack, input.overrides);
  const unreadable = [documentProblem(documents.rolesFile, 'roles document'), documentProblem(documents.policyTableFile, 'policy table')];
  if (unreadable[0] !== undefined) rows.fail('roles', [unreadable[0]]);
  if (unreadable[1] !== undefined) rows.fail('policy table', [unreadable[1]]);
  if (unreadable.some((p) => p !== undefined)) return rows.report(input.pack, pack.name, null);

  let hosted: HostedPack;
  try {
    hosted = await hostToolPack(pack, input.env, input.overrides);
  } catch (error) {
    judgeHostFailure(rows, packFailure(error, documents).problems);
    return rows.report(input.pack, pack.name, null);
  }
  const snapshot = judgeHosted(rows, hosted, input);
  return rows.report(input.pack, pack.name, snapshot);
}
