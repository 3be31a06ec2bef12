import type { DraftArgs, IsPreview, RunArgs, RunResult, ToolArgs, ToolContract } from './define-tool.js';
import { isErrorCode } from './error-codes.js';
import type { ErrorCode } from './error-codes.js';
import { GatehouseError } from './gatehouse-error.js';
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
  /**
   * A credential for one request to the tool's system of record, to send as `Authorization: Bearer
   * …`: a call assertion the executor mints for this call and exactly `request` — its method, path
   * and query — fresh on every ask (its `jti` is single-use, so ask once per request); or the IdP's
   * token for the run's person when the tool's credential is `{ exchange }` (`request` is then not
   * needed). `authorizedFetch` asks with the request it sends. Rejects with a ToolFailure
   * (`CREDENTIAL_REFUSED`) when the tool declares no audience, an assertion is asked for without
   * its request, or the IdP refuses the exchange.
   */
  readonly credential: (request?: CredentialRequest) => Promise<string>;
}

/** The one request a call assertion is asked for: what the system of record checks it against. */
export interface CredentialRequest {
  /** The method the request is sent with (`GET`, `POST`, …), as given to `fetch`. */
  readonly method: string;
  /** The absolute URL it is sent to: the assertion names its path and query. */
  readonly url: string | URL;
}

/**
 * How a tool's calls prove themselves to its system of record. Either a call assertion, a JWT the
 * executor signs for `audience`, naming the run's principal and person, the tenant, the tool, the
 * arguments' hash and, for a write, its idempotency key and approval (verified against the
 * executors' JWKS); or, for a system that trusts only the company's IdP, a token the IdP issues for
 * the run's person by token exchange (RFC 8693).
 */
export type CallCredential = AssertionCredential | ExchangedCredential;

/** A call assertion for the system of record whose `aud` is `audience`. */
export interface AssertionCredential {
  /** The system of record's audience: the `aud` it checks. */
  readonly audience: string;
}

/**
 * The IdP's own token for the run's person (`on_behalf_of`), exchanged by the executor for the
 * system of record's audience and scope. A run whose person handed over no token, or whose session
 * at the IdP has ended, gets `CREDENTIAL_REFUSED` before the handler runs.
 */
export interface ExchangedCredential {
  readonly exchange: {
    /** The system of record's client id at the IdP: the exchanged token's `aud`. */
    readonly audience: string;
    /** Space-separated scopes to ask for (the executors' client must be allowed them). */
    readonly scope?: string;
  };
}

/** Whether a credential is the IdP's token by exchange rather than a call assertion. */
export function isExchangedCredential(credential: CallCredential | undefined): credential is ExchangedCredential {
  return credential !== undefined && 'exchange' in credential;
}

/**
 * A handler's typed failure. `ambiguous` says the effect may have happened anyway (a timeout, a
 * dropped connection, a success body that does not parse): the executor then asks the tool's status
 * query instead of guessing.
 */
export class ToolFailure extends GatehouseError<ErrorCode> {
  readonly error: ToolError;
  readonly ambiguous: boolean;

  constructor(error: ToolError, options: { readonly ambiguous?: boolean; readonly cause?: unknown } = {}) {
    super(error.code, error.message, { retryable: error.retryable, cause: options.cause });
    this.error = error;
    this.ambiguous = options.ambiguous ?? false;
  }
}

/**
 * Whether `value` is a ToolFailure, judged by its shape rather than by `instanceof`: a tool pack
 * loaded from its own path may bring its own copy of this package, whose class is another object.
 */
export function isToolFailure(value: unknown): value is ToolFailure {
  if (value instanceof ToolFailure) return true;
  return (
    value instanceof Error &&
    value.name === 'ToolFailure' &&
    'ambiguous' in value &&
    typeof value.ambiguous === 'boolean' &&
    'error' in value &&
    typeof value.error === 'object' &&
    value.error !== null &&
    'code' in value.error &&
    isErrorCode(value.error.code)
  );
}

/** The answer of a status query for an idempotency key. */
export type StatusAnswer =
  | { readonly state: 'succeeded'; readonly result: unknown }
  | { readonly state: 'failed'; readonly error: ToolError }
  | { readonly state: 'unknown' };

/**
 * The effect a preview computed, which Gatehouse stores as a canonical proposal for its commit tool.
 * `A` is the type of the proposal arguments (the commit's proposal schema, for a typed pair).
 */
export interface ProposalDraft<A = unknown> {
  /** The commit's arguments, exactly as they will run (canonicalized and hashed when stored). */
  readonly arguments: A;
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

/**
 * A contract with the code that runs it (methods, so implementations of many contracts share one
 * list). For the two sides of a typed preview/commit pair the types follow the proposal schema: the
 * preview's `propose` gets the result its `run` returned and drafts proposal arguments; the commit's
 * `run` and `resourceOf` get those arguments, as stored and approved.
 */
export interface ToolImplementation<T extends ToolContract = ToolContract> {
  readonly contract: T;
  /** Returns the result view; the executor validates it against the output schema before anything leaves. */
  run(args: RunArgs<T>, context: ExecutionContext): Promise<RunResult<T>>;
  /** For writes: asks the system of record what happened under an idempotency key. Throws when it cannot tell. */
  status?(idempotencyKey: string, context: ExecutionContext): Promise<StatusAnswer>;
  /** For preview tools: the proposal their result stands for. */
  propose?(args: ToolArgs<T>, result: RunResult<T>, context: ExecutionContext): ProposalDraft<DraftArgs<T>>;
  /** For writes: the resource they change (`customer:C-1842`), serialized across executors. */
  resourceOf?(args: RunArgs<T>): string;
  /** How its calls prove themselves to the system of record (default: the pack's `credential`). */
  readonly credential?: CallCredential;
}

/** What `implement` takes: everything but the contract; the preview of a typed pair must `propose`. */
export type ImplementationParts<T extends ToolContract> = Omit<ToolImplementation<T>, 'contract'> &
  (IsPreview<T> extends true ? Required<Pick<ToolImplementation<T>, 'propose'>> : unknown);

/** Pairs a contract with its handler, typed by the contract's schemas. */
export function implement<T extends ToolContract>(contract: T, parts: ImplementationParts<T>): ToolImplementation<T> {
  return { contract, ...parts };
}
