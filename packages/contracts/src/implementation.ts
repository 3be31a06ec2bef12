import type { ToolArgs, ToolContract } from './define-tool.js';
import type { ToolError } from './tool-error.js';

/** What a handler knows about the call it runs. Everything here was decided by trusted code. */
export interface ExecutionContext {
  readonly signal: AbortSignal;
  readonly commandId: string;
  readonly operationId: string;
  readonly runId: string;
  readonly tenant: string;
  readonly principal: string;
  readonly environment: string;
  /** For writes: the key made outside the model (run:proposal:operation), passed downstream. */
  readonly idempotencyKey: string | null;
  readonly deadlineAt: number | null;
}

/**
 * A handler's typed failure. `ambiguous` says the effect may have happened anyway (a timeout, a
 * dropped connection, a success body that does not parse): the executor then asks the tool's status
 * query instead of guessing.
 */
export class ToolFailure extends Error {
  readonly error: ToolError;
  readonly ambiguous: boolean;

  constructor(error: ToolError, options: { readonly ambiguous?: boolean; readonly cause?: unknown } = {}) {
    super(error.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolFailure';
    this.error = error;
    this.ambiguous = options.ambiguous ?? false;
  }
}

/** The answer of a status query for an idempotency key. */
export type StatusAnswer =
  | { readonly state: 'succeeded'; readonly result: unknown }
  | { readonly state: 'failed'; readonly error: ToolError }
  | { readonly state: 'unknown' };

/** The effect a preview computed, which Gatehouse stores as a canonical proposal for its commit tool. */
export interface ProposalDraft {
  /** The commit's arguments, exactly as they will run (canonicalized and hashed when stored). */
  readonly arguments: unknown;
  readonly target: { readonly type: string; readonly id: string; readonly version: number | null };
  /** One sentence for the approver. */
  readonly effect: string;
  readonly diff: {
    readonly changes: readonly { readonly field: string; readonly before: unknown; readonly after: unknown }[];
    readonly recipients: readonly string[];
    readonly amount: { readonly minor: number; readonly currency: string } | null;
    readonly affectedRecords: number;
    readonly irreversible: readonly string[];
  };
}

/** A contract with the code that runs it (methods, so implementations of many contracts share one list). */
export interface ToolImplementation<T extends ToolContract = ToolContract> {
  readonly contract: T;
  /** Returns the result view; the executor validates it against the output schema before anything leaves. */
  run(args: ToolArgs<T>, context: ExecutionContext): Promise<unknown>;
  /** For writes: asks the system of record what happened under an idempotency key. Throws when it cannot tell. */
  status?(idempotencyKey: string, context: ExecutionContext): Promise<StatusAnswer>;
  /** For preview tools: the proposal their result stands for. */
  propose?(args: ToolArgs<T>, result: unknown, context: ExecutionContext): ProposalDraft;
  /** For writes: the resource they change (`customer:C-1842`), serialized across executors. */
  resourceOf?(args: ToolArgs<T>): string;
}

/** Pairs a contract with its handler, typed by the contract's schemas. */
export function implement<T extends ToolContract>(
  contract: T,
  parts: Omit<ToolImplementation<T>, 'contract'>,
): ToolImplementation<T> {
  return { contract, ...parts };
}
