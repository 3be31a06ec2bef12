import { fileURLToPath } from 'node:url';
import type { ToolPack } from '@gatehouse/sdk';
import type { DocumentOverrides } from './pack-choice.js';

/** The roles document and policy table a pack is hosted with: the overrides, else the pack's own. */
export interface DocumentsInForce {
  readonly rolesFile: string | undefined;
  readonly policyTableFile: string | undefined;
}

/** The part of a pack a problem is about: each `pack check` row, and the code a command exits with. */
export const PackPart = {
  /** Importing the module and finding the pack in it. */
  load: 'load',
  /** describePack: the name, the config spec, the document URLs, setup and tools being functions. */
  shape: 'shape',
  /** readPackConfig: the pack's variables as the environment sets them. */
  config: 'config',
  /** setup or tools(deps) threw. */
  setup: 'setup',
  /** tools(deps) returned one implementation per address; every preview proposes. */
  tools: 'tools',
  /** Catalog.load: lint, compile, references between tools. */
  schemas: 'schemas',
  roles: 'roles',
  policyTable: 'policyTable',
} as const;
export type PackPart = (typeof PackPart)[keyof typeof PackPart];

/** One problem: the part it is about, and its line (a document's problems name the file in force). */
export interface PackProblem {
  readonly part: PackPart;
  readonly text: string;
}

/** Why a pack cannot be used, for people (`message`), scripts (`code`) and `pack check` (every problem, by part). */
export interface PackFailure {
  readonly code: string;
  readonly message: string;
  readonly problems: readonly PackProblem[];
}

const fileOf = (url: unknown): string | undefined => (url instanceof URL && url.protocol === 'file:' ? fileURLToPath(url) : undefined);
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export function documentsInForce(pack: ToolPack, overrides: DocumentOverrides): DocumentsInForce {
  return { rolesFile: overrides.rolesFile ?? fileOf(pack.roles), policyTableFile: overrides.policyTableFile ?? fileOf(pack.policyTable) };
}

interface PackErrorShape {
  readonly code: 'PACK_INVALID' | 'PACK_CONFIG_INVALID';
  readonly pack: string;
  readonly problems: readonly string[];
}

/** A PackError, recognised by its shape: a pack loaded from its own path may bring its own copy of @gatehouse/sdk. */
function asPackError(error: unknown): PackErrorShape | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, pack, problems } = error as Partial<Record<'code' | 'pack' | 'problems', unknown>>;
  if ((code !== 'PACK_INVALID' && code !== 'PACK_CONFIG_INVALID') || typeof pack !== 'string' || !Array.isArray(problems)) return undefined;
  return { code, pack, problems: problems.map(String) };
}

/**
 * The part a validator's problem is about. validatePack names the part first (`roles: …`,
 * `policyTable: …`, `tool <address>: …`, and `tool <address> /<pointer>: …` for the catalog's lint
 * and compile problems); a PackError's code tells configuration from definition.
 */
function partOf(code: PackErrorShape['code'], problem: string): PackPart {
  if (code === 'PACK_CONFIG_INVALID') return PackPart.config;
  if (problem.startsWith('roles: ')) return PackPart.roles;
  if (problem.startsWith('policyTable: ')) return PackPart.policyTable;
  if (/^tool \S+ \//.test(problem)) return PackPart.schemas;
  if (problem.startsWith('tool ') || problem.startsWith('tools: ')) return PackPart.tools;
  return PackPart.shape;
}

/** A document's problem names the file in force, so the line says which file to fix: `policyTable: …` → `/etc/gatehouse/policy-table.json: …`. */
function located(part: PackPart, problem: string, documents: DocumentsInForce): string {
  const [prefix, file] =
    part === PackPart.roles
      ? ['roles: ', documents.rolesFile]
      : part === PackPart.policyTable
        ? ['policyTable: ', documents.policyTableFile]
        : ['', undefined];
  return file !== undefined && problem.startsWith(prefix) ? `${file}: ${problem.slice(prefix.length)}` : problem;
}

/** Problems about one document only keep the code the CLI always gave that document. */
function codeOf(code: PackErrorShape['code'], problems: readonly PackProblem[]): string {
  if (problems.length > 0 && problems.every((p) => p.part === PackPart.policyTable)) return 'POLICY_TABLE_INVALID';
  if (problems.length > 0 && problems.every((p) => p.part === PackPart.roles)) return 'ROLES_INVALID';
  return code;
}

/** What went wrong loading or hosting a pack: the loader's or validator's message, with every problem listed. */
export function packFailure(
  error: unknown,
  documents: DocumentsInForce = { rolesFile: undefined, policyTableFile: undefined },
  loadHint = '',
): PackFailure {
  const packError = asPackError(error);
  if (packError !== undefined) {
    const problems = packError.problems.map((raw) => {
      const part = partOf(packError.code, raw);
      return { part, text: located(part, raw, documents) };
    });
    const what = packError.code === 'PACK_CONFIG_INVALID' ? 'configuration' : 'definition';
    const count = `${problems.length} problem${problems.length === 1 ? '' : 's'}`;
    const message = `tool pack ${packError.pack}: ${what} is invalid (${count}):\n${problems.map((p) => `- ${p.text}`).join('\n')}`;
    return { code: codeOf(packError.code, problems), message, problems };
  }
  // ToolPackLoadError (PACK_LOAD_FAILED) says "tool pack: …" itself; anything else was thrown by the pack's setup or tools.
  if ((error as { code?: unknown } | null)?.code === 'PACK_LOAD_FAILED') {
    const text = `${reason(error)}${loadHint}`;
    return { code: 'PACK_LOAD_FAILED', message: text, problems: [{ part: PackPart.load, text }] };
  }
  return {
    code: 'PACK_SETUP_FAILED',
    message: `tool pack: its setup or tools threw: ${reason(error)}`,
    problems: [{ part: PackPart.setup, text: `setup or tools threw: ${reason(error)}` }],
  };
}
