import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { toolAddress } from './tool-address.js';
import type { ToolAddress } from './tool-address.js';

export type { JSONSchema } from 'json-schema-to-ts';

export const Effect = { read: 'read', write: 'write' } as const;
export type Effect = keyof typeof Effect;

export const RetryClass = { safe: 'safe', idempotent: 'idempotent', never: 'never' } as const;
export type RetryClass = keyof typeof RetryClass;

export const RateLimitScope = { tenant: 'tenant', run: 'run' } as const;
export type RateLimitScope = keyof typeof RateLimitScope;

/** `none` · `cooperative` · `compensate:<tool address>` (the compensation is its own approved write). */
export type CancelMode = 'none' | 'cooperative' | `compensate:${string}`;

export interface RateLimit {
  readonly limit: number;
  readonly windowMs: number;
  readonly per: RateLimitScope;
}

export const DEFAULT_CONCURRENCY = 'default';

/** What a tool author writes: the contract of one tool version (docs/tool-packs.md, "Make it yours"). */
export interface ToolSpec<I extends JSONSchema = JSONSchema, O extends JSONSchema = JSONSchema> {
  /** snake_case, `^[a-z][a-z0-9_]*$`. */
  readonly name: string;
  /** Positive integer; an incompatible change is a new version. */
  readonly version: number;
  /** When to use the tool, for the model. Never a place for rules. */
  readonly description: string;
  /** JSON Schema 2020-12 of the arguments, written `as const` so the types flow from it. */
  readonly input: I;
  /** JSON Schema of the result view the model may see. */
  readonly output: O;
  readonly effect: Effect;
  readonly retry: RetryClass;
  /** Id of the policy rule that governs the tool; required for writes. */
  readonly approval?: string;
  readonly timeoutMs: number;
  readonly rateLimit?: RateLimit;
  /** Slot class; `default` when absent. */
  readonly concurrency?: string;
  readonly cancel: CancelMode;
  readonly maxResultBytes: number;
  /** Present exactly when the tool is a list. */
  readonly pagination?: { readonly maxPageSize: number };
  /** On a preview tool: the address of the commit tool it prepares proposals for. */
  readonly commits?: string;
  /** On a commit tool: the address of its preview tool. */
  readonly previewedBy?: string;
  /**
   * On a commit tool: JSON Schema of the arguments its proposals carry — what the preview's
   * `propose` computes and what `run` receives. Linted and compiled at load like `input`; the
   * executor checks a draft against it before storing it and a stored proposal before running it.
   */
  readonly proposal?: JSONSchema;
  readonly retired?: boolean;
  /** Talks to the world outside the tenant (email, payment): MCP `openWorldHint`. */
  readonly external?: boolean;
  readonly destructive?: boolean;
  /**
   * On a write: its system of record honours the `Idempotency-Key` — it stores the key in the
   * write's own transaction and answers a repeat with the first answer. The executor may then send
   * a write whose owner died again under the same key, instead of handing it to an operator.
   */
  readonly honoursIdempotencyKey?: boolean;
  /** Human title for tool listings; derived from the name when absent. */
  readonly title?: string;
}

/** Brand of the phantom member that carries a contract's argument and result types. */
declare const contractTypes: unique symbol;

/**
 * A contract's part in a preview/commit pair, known to the types only when the pair was declared
 * with its proposal schema (the sdk's `definePreviewCommit`). The wide union means "not known":
 * the contract is typed as a plain tool.
 */
export type PairRole = 'preview' | 'commit' | 'tool';

/** The fields Gatehouse adds to a preview's result once it has stored the proposal. */
export type PreviewField = 'proposal_id' | 'expires_at' | 'effect';

/** Types of a schema: `unknown` for the wide `JSONSchema`, else json-schema-to-ts's `FromSchema`. */
export type SchemaType<S extends JSONSchema> = JSONSchema extends S ? unknown : FromSchema<S>;

/**
 * A registered, immutable tool version. `I` / `O` are its schemas' literal types; `Args` / `Result`
 * are computed from them once, by `defineTool`, and carried by a phantom member so that reading
 * them back (`ToolArgs`) never re-runs `FromSchema` during inference. `Proposal` and `Role` are
 * set for the two contracts of a typed preview/commit pair: the type of the proposal arguments,
 * and which side of the pair this is.
 */
export interface ToolContract<
  I extends JSONSchema = JSONSchema,
  O extends JSONSchema = JSONSchema,
  Args = SchemaType<I>,
  Result = SchemaType<O>,
  Proposal = unknown,
  Role extends PairRole = PairRole,
> extends ToolSpec<I, O> {
  readonly address: ToolAddress;
  readonly concurrency: string;
  /** Type-level only; never present at runtime. */
  readonly [contractTypes]?: { readonly args: Args; readonly result: Result; readonly proposal: Proposal; readonly role: Role };
}

/** The arguments type of a tool: `ToolArgs<typeof getCustomer>`. */
export type ToolArgs<T> = T extends { readonly [contractTypes]?: { readonly args: infer A } } ? A : never;

/** The result type of a tool: `ToolResultOf<typeof getCustomer>`. */
export type ToolResultOf<T> = T extends { readonly [contractTypes]?: { readonly result: infer R } } ? R : never;

/** The proposal arguments of either side of a typed pair: what the preview drafts, what the commit runs. */
export type ProposalArgs<T> = T extends { readonly [contractTypes]?: { readonly proposal: infer P } } ? P : never;

type RoleOf<T> = T extends { readonly [contractTypes]?: { readonly role: infer R } } ? R : never;

/** True (as a type) for the preview of a typed pair, false for anything else. */
export type IsPreview<T> = [RoleOf<T>] extends ['preview'] ? true : false;

/** What a handler's `run` receives: the commit of a typed pair runs with its proposal's arguments. */
export type RunArgs<T> = [RoleOf<T>] extends ['commit'] ? ProposalArgs<T> : ToolArgs<T>;

/** A preview's result as its handler returns it: the output view without the fields Gatehouse adds. */
export type PreviewResultOf<T> = Omit<ToolResultOf<T>, PreviewField>;

/**
 * What a handler's `run` returns. Typed for the preview of a typed pair, whose `propose` reads it
 * before the executor has validated anything; `unknown` elsewhere, where the executor validates the
 * value against the output schema before any of it leaves.
 */
export type RunResult<T> = IsPreview<T> extends true ? PreviewResultOf<T> : unknown;

/** The arguments a preview's drafts carry: typed by the proposal schema for a typed pair. */
export type DraftArgs<T> = IsPreview<T> extends true ? ProposalArgs<T> : unknown;

/** A handler typed by its contract, without restating fields. */
export type ToolHandler<T> = (args: ToolArgs<T>) => Promise<ToolResultOf<T>>;

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

/** A contract's runtime value: the spec, addressed, with its slot class. */
export type BuiltContract<I extends JSONSchema, O extends JSONSchema> = ToolSpec<I, O> & {
  readonly address: ToolAddress;
  readonly concurrency: string;
};

/**
 * The runtime half of `defineTool`: a deeply frozen contract with its `address` (`name.vN`) and
 * slot class. Its type carries no phantom types, so the caller states the contract type it builds
 * (`defineTool`, the sdk's `definePreviewCommit`).
 */
export function buildContract<I extends JSONSchema, O extends JSONSchema>(spec: ToolSpec<I, O>): BuiltContract<I, O> {
  return deepFreeze({
    ...spec,
    address: toolAddress(spec.name, spec.version),
    concurrency: spec.concurrency ?? DEFAULT_CONCURRENCY,
  });
}

/**
 * Declares a tool version. Returns a deeply frozen contract with its `address` (`name.vN`).
 * Nothing is checked here: `Catalog.load` lints every tool and reports all problems at once.
 */
export function defineTool<const I extends JSONSchema, const O extends JSONSchema>(
  spec: ToolSpec<I, O>,
): ToolContract<I, O, NoInfer<SchemaType<I>>, NoInfer<SchemaType<O>>> {
  return buildContract(spec);
}
