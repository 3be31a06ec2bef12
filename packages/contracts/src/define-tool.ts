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

/** What a tool author writes. See DESIGN.md "Tool contracts". */
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
  readonly retired?: boolean;
  /** Talks to the world outside the tenant (email, payment): MCP `openWorldHint`. */
  readonly external?: boolean;
  readonly destructive?: boolean;
  /** Human title for tool listings; derived from the name when absent. */
  readonly title?: string;
}

/** Brand of the phantom member that carries a contract's argument and result types. */
declare const contractTypes: unique symbol;

/** Types of a schema: `unknown` for the wide `JSONSchema`, else json-schema-to-ts's `FromSchema`. */
export type SchemaType<S extends JSONSchema> = JSONSchema extends S ? unknown : FromSchema<S>;

/**
 * A registered, immutable tool version. `I` / `O` are its schemas' literal types; `Args` / `Result`
 * are computed from them once, by `defineTool`, and carried by a phantom member so that reading
 * them back (`ToolArgs`) never re-runs `FromSchema` during inference.
 */
export interface ToolContract<
  I extends JSONSchema = JSONSchema,
  O extends JSONSchema = JSONSchema,
  Args = SchemaType<I>,
  Result = SchemaType<O>,
> extends ToolSpec<I, O> {
  readonly address: ToolAddress;
  readonly concurrency: string;
  /** Type-level only; never present at runtime. */
  readonly [contractTypes]?: { readonly args: Args; readonly result: Result };
}

/** The arguments type of a tool: `ToolArgs<typeof getCustomer>`. */
export type ToolArgs<T> = T extends { readonly [contractTypes]?: { readonly args: infer A } } ? A : never;

/** The result type of a tool: `ToolResultOf<typeof getCustomer>`. */
export type ToolResultOf<T> = T extends { readonly [contractTypes]?: { readonly result: infer R } } ? R : never;

/** A handler typed by its contract, without restating fields. */
export type ToolHandler<T> = (args: ToolArgs<T>) => Promise<ToolResultOf<T>>;

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

/**
 * Declares a tool version. Returns a deeply frozen contract with its `address` (`name.vN`).
 * Nothing is checked here: `Catalog.load` lints every tool and reports all problems at once.
 */
export function defineTool<const I extends JSONSchema, const O extends JSONSchema>(
  spec: ToolSpec<I, O>,
): ToolContract<I, O, NoInfer<SchemaType<I>>, NoInfer<SchemaType<O>>> {
  return deepFreeze({
    ...spec,
    address: toolAddress(spec.name, spec.version),
    concurrency: spec.concurrency ?? DEFAULT_CONCURRENCY,
  });
}
