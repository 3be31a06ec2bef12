// The one error catalogue of Gatehouse: every code any part of it answers or throws, with what it
// means, whether the same call can ever succeed (`retryable`), the HTTP status where an HTTP API
// answers it, and where it is answered (`on`):
//   results    the `error.code` of a result on `gatehouse.results` (what agents branch on)
//   api        the HTTP APIs' own refusals (control, operator and approval APIs, the ops ports)
//   identity   a refusal of who an HTTP caller is
//   assertion  a system of record's refusal of a call assertion
//   process    what a process or a tool throws (start-up settings, keys, packs, the event plumbing)
//   cli        what the `gatehouse` command reports besides the services' own codes
// The catalogue is APPEND-ONLY: a code is never removed, renamed or reused for a new meaning,
// because agent runtimes, scripts and dashboards branch on it. A code that serves two surfaces has
// one entry and one meaning.

/** Where a code is answered: see the head of this file. */
export type ErrorSurface = 'results' | 'api' | 'identity' | 'assertion' | 'process' | 'cli';

/** The HTTP statuses Gatehouse's APIs and the systems of record's refusals answer with. */
export type HttpStatus = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 500 | 503;

export interface ErrorEntry {
  readonly on: readonly ErrorSurface[];
  /** The default: whether an identical call can ever succeed. A producer may override it for one error (see `toolError`). */
  readonly retryable: boolean;
  readonly status?: HttpStatus;
  /** One sentence, ending with a period. */
  readonly meaning: string;
}

const RESULTS = ['results'] as const;
const RESULTS_AND_ASSERTIONS = ['results', 'assertion'] as const;
const RESULTS_AND_PROCESSES = ['results', 'process'] as const;
const API = ['api'] as const;
const API_AND_PROCESSES = ['api', 'process'] as const;
const IDENTITY = ['identity'] as const;
const ASSERTION = ['assertion'] as const;
const PROCESS = ['process'] as const;
const PROCESS_AND_CLI = ['process', 'cli'] as const;
const CLI = ['cli'] as const;

export const ERRORS = {
  INVALID_ARGUMENT: { on: RESULTS, retryable: false, meaning: 'The arguments do not match the input schema of the tool version.' },
  TOOL_NOT_FOUND: {
    on: RESULTS,
    retryable: false,
    meaning: 'No tool is registered at this address; `next` names the live version when the name is known.',
  },
  TOOL_VERSION_RETIRED: {
    on: RESULTS,
    retryable: false,
    meaning: 'This tool version is retired for this run; `next` names the live version.',
  },
  CAPABILITY_DENIED: {
    on: RESULTS,
    retryable: false,
    meaning: 'The run may not call this tool or use this proposal; `permitted` lists what it may call and `next` what would serve.',
  },
  RUN_NOT_FOUND: {
    on: RESULTS_AND_PROCESSES,
    retryable: false,
    meaning:
      'No active run has this id: it was never registered, has expired or was stopped (a trace finds none of its commands on the commands topic).',
  },
  TENANT_MISMATCH: {
    on: RESULTS_AND_ASSERTIONS,
    retryable: false,
    status: 403,
    meaning:
      'The command, run, proposal or target belongs to another tenant; to a system of record, the call assertion is for another tenant than the request names.',
  },
  PAYLOAD_TOO_LARGE: { on: RESULTS, retryable: false, meaning: 'The serialized arguments exceed the size limit of the boundary.' },
  RATE_LIMITED: { on: RESULTS, retryable: true, meaning: 'The rate limit of the tool is exhausted; retry after `retryAfterMs`.' },
  APPROVAL_REJECTED: { on: RESULTS, retryable: false, meaning: 'An approver rejected the proposal; the message carries their reason.' },
  APPROVAL_EXPIRED: { on: RESULTS, retryable: false, meaning: 'The approval or its request expired before use; silence is never consent.' },
  PROPOSAL_NOT_FOUND: { on: RESULTS, retryable: false, meaning: 'No stored proposal has this id for this run.' },
  PROPOSAL_CONSUMED: { on: RESULTS, retryable: false, meaning: 'The proposal was already committed once; proposals are single use.' },
  ARGUMENTS_MISMATCH: {
    on: RESULTS,
    retryable: false,
    meaning: 'The canonical arguments no longer hash to the approved `arguments_sha256`.',
  },
  VERSION_CONFLICT: {
    on: RESULTS,
    retryable: false,
    meaning: 'The target changed after the proposal was created; read again and propose anew.',
  },
  IDEMPOTENCY_KEY_REUSED: { on: RESULTS, retryable: false, meaning: 'The idempotency key was already used with different arguments.' },
  TIMEOUT: { on: RESULTS, retryable: true, meaning: 'The tool did not answer within its timeout and nothing shows it took effect.' },
  OUTCOME_UNKNOWN: {
    on: RESULTS,
    retryable: false,
    meaning: 'A write may or may not have happened; an operator resolves it, nothing is invented.',
  },
  OUTPUT_INVALID: {
    on: RESULTS,
    retryable: false,
    meaning: 'The tool returned a result outside its output schema; nothing of it is released.',
  },
  RESULT_TOO_LARGE: { on: RESULTS, retryable: false, meaning: 'The result exceeds `maxResultBytes` of the tool version.' },
  NOT_FOUND: { on: RESULTS, retryable: false, meaning: 'The record the arguments refer to does not exist for this tenant.' },
  UPSTREAM_ERROR: { on: RESULTS, retryable: true, meaning: 'The system of record failed for a reason outside the contract.' },
  POLICY_DENIED: { on: RESULTS, retryable: false, meaning: 'The policy table denies this effect for this tool, environment and scope.' },
  WRITE_NOT_SUPPORTED: { on: RESULTS, retryable: false, meaning: 'Writes through this path are not available for this tool yet.' },
  IN_PROGRESS: {
    on: RESULTS,
    retryable: true,
    meaning: 'A call with the same idempotency key is executing now; retry later for its result.',
  },
  UNAUTHORIZED_APPROVER: { on: RESULTS, retryable: false, meaning: 'The approver lacks the authority the policy rule requires.' },
  SELF_APPROVAL: { on: RESULTS, retryable: false, meaning: 'The principal that requested the change cannot approve it.' },
  OPERATION_CANCELLED: { on: RESULTS, retryable: false, meaning: 'The operation was cancelled before it completed.' },
  TOOL_VERSION_UNAVAILABLE: {
    on: RESULTS,
    retryable: true,
    meaning:
      'The executor that took the order does not host this tool version (a rolling upgrade of the tool pack is under way); nothing ran, and `next` names the versions it hosts.',
  },
  IDEMPOTENCY_KEY_MISSING: {
    on: RESULTS,
    retryable: false,
    meaning:
      'A write order reached the executor without an idempotency key; nothing ran (the policy and approval services always give one).',
  },
  ORDER_NOT_TRUSTED: {
    on: RESULTS,
    retryable: false,
    meaning:
      'Not sent since signatures hold the ids: an order no policy or approval key signed goes to `gatehouse.execute.dlq` unanswered (its ids are whatever the forger wrote). Kept so that the code is never reused.',
  },
  APPROVAL_NOT_FOUND: {
    on: RESULTS,
    retryable: false,
    meaning:
      'The approval a write order names is not in the approval store (it carried none, or the record is gone); nothing ran: preview and ask for approval again.',
  },
  CREDENTIAL_REFUSED: {
    on: RESULTS,
    retryable: false,
    meaning:
      "No credential for the tool's system of record could be had (the tool declares no audience for its calls, or the IdP refused to exchange the person's token: none was handed over, or their session has ended), so nothing was sent.",
  },
  PROPOSAL_EXPIRED: {
    on: RESULTS,
    retryable: false,
    meaning: 'The proposal expired before it was committed; `next` names the preview that makes a new one.',
  },
  CONTRACT_MISMATCH: {
    on: RESULTS,
    retryable: false,
    meaning:
      'The executor hosts this tool version with another contract than the service that ordered the call (a pack changed under a published version, or two packs disagree): nothing ran. A changed tool needs a new version; an operator must bring the fleet onto one contract.',
  },

  // The HTTP APIs' own refusals. Where the meaning is a result code's, the APIs answer that one.
  INVALID_REQUEST: {
    on: API,
    retryable: false,
    status: 400,
    meaning: 'The request does not match the route (its body, query or headers); the message names the part.',
  },
  INTERNAL: {
    on: API,
    retryable: false,
    status: 500,
    meaning: 'The service failed unexpectedly; nothing of the cause is shown, the service logs it.',
  },
  RUN_EXISTS: { on: API, retryable: false, status: 409, meaning: 'A run with this `run_id` is already registered.' },
  UNKNOWN_ROLE: { on: API, retryable: false, status: 422, meaning: 'No role of this name; `permitted` lists the roles there are.' },
  TTL_TOO_LONG: { on: API, retryable: false, status: 422, meaning: 'The run would live longer than `GATEHOUSE_MAX_RUN_TTL_MS` allows.' },
  CAPABILITY_OUTSIDE_ROLE: {
    on: API,
    retryable: false,
    status: 422,
    meaning: 'A capability asked for is not a live tool of the role: a run is narrowed from its role, never widened.',
  },
  UNKNOWN_ISSUER: {
    on: API,
    retryable: false,
    status: 422,
    meaning: '`on_behalf_of` names a person of another issuer than the configured identity provider.',
  },
  SUBJECT_TOKEN_REFUSED: {
    on: API,
    retryable: false,
    status: 422,
    meaning:
      "The person's token handed to a run is not a live token of the identity provider for the executors' client (or this deployment exchanges no tokens).",
  },
  SUBJECT_MISMATCH: {
    on: API,
    retryable: false,
    status: 422,
    meaning: "The person's token names another person than `on_behalf_of`, or than the run acts for.",
  },
  NOT_PENDING: {
    on: API,
    retryable: false,
    status: 409,
    meaning: 'The approval request was already decided or has expired; `state` says which.',
  },
  NOT_UNKNOWN: {
    on: API,
    retryable: false,
    status: 409,
    meaning: 'Retired: the operator API answered it until it answered `OUTCOME_ALREADY_KNOWN` instead; kept so it is never reused.',
  },
  OUTCOME_ALREADY_KNOWN: {
    on: API,
    retryable: false,
    status: 409,
    meaning:
      "The operation's outcome is already known (it succeeded or failed, or an operator resolved it meanwhile): there is nothing to resolve.",
  },
  STORE_UNCONFIRMED: {
    on: API_AND_PROCESSES,
    retryable: true,
    status: 503,
    meaning:
      'Redis did not confirm the change on the replicas `GATEHOUSE_REDIS_WAIT_REPLICAS` asks for in time, so nothing was published; the same request again is safe and completes it.',
  },
  PROPOSAL_MISMATCH: {
    on: API,
    retryable: false,
    status: 409,
    meaning:
      "A decision's `arguments_sha256` or `target_version` (what the person was shown) differs from the stored proposal: nothing was recorded; reload it and decide again.",
  },
  REQUEST_UNVERIFIED: {
    on: API,
    retryable: false,
    status: 409,
    meaning:
      'The stored approval request is no longer the one the policy service signed (its database row was changed): nobody can decide it, nothing was recorded, and the refusal is counted (`gatehouse_untrusted_records_total{kind="approvalsRequested"}`). The agent must propose again.',
  },

  // Who an HTTP caller is. A 401 carries `WWW-Authenticate`.
  UNAUTHORIZED: { on: IDENTITY, retryable: false, status: 401, meaning: 'No credential: neither a bearer token nor a session.' },
  TOKEN_MALFORMED: {
    on: IDENTITY,
    retryable: false,
    status: 401,
    meaning: 'The bearer token is not a JWT, is unsigned, or lacks sub, exp or iat.',
  },
  TOKEN_TYPE_INVALID: {
    on: IDENTITY,
    retryable: false,
    status: 401,
    meaning: 'The bearer token is no access token (an ID token, a refresh token or another type).',
  },
  TOKEN_ISSUER_UNKNOWN: {
    on: IDENTITY,
    retryable: false,
    status: 401,
    meaning: 'The token was issued by another issuer than the configured one.',
  },
  TOKEN_AUDIENCE_MISMATCH: { on: IDENTITY, retryable: false, status: 401, meaning: 'The token is meant for another audience.' },
  TOKEN_EXPIRED: { on: IDENTITY, retryable: false, status: 401, meaning: 'The token expired (beyond the clock tolerance).' },
  TOKEN_NOT_YET_VALID: { on: IDENTITY, retryable: false, status: 401, meaning: 'The token is not valid yet (nbf or iat in the future).' },
  TOKEN_SIGNATURE_INVALID: {
    on: IDENTITY,
    retryable: false,
    status: 401,
    meaning: 'No key the issuer publishes signed the token as it is.',
  },
  ISSUER_UNAVAILABLE: {
    on: ['identity', 'process', 'cli'],
    retryable: true,
    status: 503,
    meaning: "The issuer's discovery document or keys could not be fetched, or named another issuer; the same token may succeed on retry.",
  },
  INSUFFICIENT_SCOPE: { on: IDENTITY, retryable: false, status: 403, meaning: 'The token does not carry the scope this API needs.' },
  NOT_AN_APPROVER: { on: IDENTITY, retryable: false, status: 403, meaning: "The person's claims map to no approver role." },
  NO_TENANT: { on: IDENTITY, retryable: false, status: 403, meaning: "The person's claims map to no tenant." },
  RUN_INACTIVE: {
    on: IDENTITY,
    retryable: false,
    status: 401,
    meaning: 'The run the token acts in has expired or was stopped (a run token, or the run of a sign-in session).',
  },
  NOT_AN_AGENT_OWNER: {
    on: IDENTITY,
    retryable: false,
    status: 403,
    meaning: "The person's claims match no rule of the MCP front door's agent policy: no agent may act for them.",
  },
  SESSION_INVALID: {
    on: IDENTITY,
    retryable: false,
    status: 401,
    meaning: 'The session cookie names no live session (forged, stale or signed out).',
  },
  SESSION_EXPIRED: {
    on: IDENTITY,
    retryable: false,
    status: 401,
    meaning: 'The identity provider no longer vouches for the session (signed out there, or disabled).',
  },
  CSRF_TOKEN_INVALID: {
    on: IDENTITY,
    retryable: false,
    status: 403,
    meaning: "A state-changing request on a session lacked the session's CSRF token.",
  },
  STEP_UP_REQUIRED: {
    on: IDENTITY,
    retryable: false,
    status: 401,
    meaning: 'This approval asks for a recent sign-in at the identity provider: sign in again (max_age), then decide.',
  },
  SIGN_IN_FAILED: {
    on: ['identity', 'cli'],
    retryable: false,
    status: 400,
    meaning: 'The sign-in could not be completed (unknown or replayed state, refused code, bad ID token).',
  },
  OTHER_TENANT: {
    on: IDENTITY,
    retryable: false,
    status: 404,
    meaning: 'The request belongs to a tenant the person does not approve for (answered as NOT_FOUND).',
  },
  NOT_AN_OPERATOR: {
    on: IDENTITY,
    retryable: false,
    status: 403,
    meaning:
      "No operator: the person's claims map to no operator role (POLICY_OPERATOR_ROLE), or the token is trusted code's, not a person's.",
  },

  // A system of record's refusal of a call. A 401: the request proves nothing; a 403: a valid
  // assertion does not cover this request. TENANT_MISMATCH is above, with the result codes.
  ASSERTION_MISSING: {
    on: ASSERTION,
    retryable: false,
    status: 401,
    meaning: 'The request carries no call assertion (`Authorization: Bearer <assertion>`).',
  },
  ASSERTION_INVALID: {
    on: ASSERTION,
    retryable: false,
    status: 401,
    meaning:
      'Not a call assertion of this deployment: malformed, of another type, issuer or audience, too long-lived, or signed by no published key.',
  },
  ASSERTION_EXPIRED: {
    on: ASSERTION,
    retryable: false,
    status: 401,
    meaning: 'The assertion has expired (or is not valid yet), beyond the clock tolerance.',
  },
  ASSERTION_REPLAYED: {
    on: ASSERTION,
    retryable: false,
    status: 401,
    meaning: 'This assertion (its `jti`) was presented before; each request needs a fresh one.',
  },
  KEYS_UNAVAILABLE: {
    on: ASSERTION,
    retryable: true,
    status: 503,
    meaning: "The executors' key set could not be read; the same request may succeed on retry.",
  },
  REPLAY_MEMORY_UNAVAILABLE: {
    on: ASSERTION,
    retryable: true,
    status: 503,
    meaning: 'The shared memory of presented assertions could not be asked (nothing was done); the same request may succeed on retry.',
  },
  WRONG_CALL: {
    on: ASSERTION,
    retryable: false,
    status: 403,
    meaning: "The assertion is for another kind of call (a read's on a write route, a write's on a status query, …).",
  },
  METHOD_MISMATCH: {
    on: ASSERTION,
    retryable: false,
    status: 403,
    meaning: 'The assertion is for a request of another HTTP method (its `method` claim).',
  },
  TARGET_MISMATCH: {
    on: ASSERTION,
    retryable: false,
    status: 403,
    meaning: 'The assertion is for a request to another path or query (its `target` claim): it covers one request, a read included.',
  },
  IDEMPOTENCY_KEY_MISMATCH: {
    on: ASSERTION,
    retryable: false,
    status: 403,
    meaning: 'The request runs under another idempotency key than the assertion names.',
  },
  APPROVAL_MISSING: { on: ASSERTION, retryable: false, status: 403, meaning: "A write's assertion names no approval." },
  BODY_MISMATCH: {
    on: ASSERTION,
    retryable: false,
    status: 403,
    meaning: "The request's canonical body does not hash to the assertion's `arguments_sha256`: it is not what was approved.",
  },

  // What a process or a tool throws: start-up settings, keys, tool packs, the event plumbing, traces.
  CONFIG_INVALID: {
    on: PROCESS,
    retryable: false,
    meaning:
      'A setting is malformed, out of range, missing or unknown (an environment variable, an address or topic, a claim mapping or agent policy document); the message names each.',
  },
  REGISTRY_UNAVAILABLE: {
    on: PROCESS,
    retryable: true,
    meaning: 'The schema registry could not be reached or answered with a server error.',
  },
  SCHEMA_REFUSED: { on: PROCESS, retryable: false, meaning: 'The registry refused a schema, e.g. as incompatible with the subject.' },
  ENCODE_FAILED: { on: PROCESS, retryable: false, meaning: 'An event does not match its Avro schema.' },
  CLAIM_LOST: {
    on: PROCESS,
    retryable: false,
    meaning:
      'A record was not published: the claim it goes out under was no longer its publisher’s when its transaction was to commit. Another owner has the command, and answers it.',
  },
  TOPICS_MISSING: {
    on: PROCESS,
    retryable: true,
    meaning:
      'A topic the service produces to or consumes from was still missing (or not served) when its wait ran out; the message names each.',
  },
  RECORD_TIMEOUT: { on: PROCESS, retryable: true, meaning: "A trace's topics were not read up to their ends within maxMs." },
  READ_FAILED: {
    on: PROCESS,
    retryable: true,
    meaning: 'A record of the run could not be read or decoded (e.g. the registry is unreachable).',
  },
  TRACE_INVALID: { on: PROCESS, retryable: false, meaning: 'A document is not a gatehouse-trace/1 trace.' },
  UNSUPPORTED_SCHEMA: {
    on: PROCESS,
    retryable: false,
    meaning: 'A schema uses a keyword, pattern or format the generator cannot satisfy; add `examples: [...]` there.',
  },
  CATALOG_INVALID: { on: PROCESS, retryable: false, meaning: 'A tool catalog cannot be loaded; the message lists every problem.' },
  SCHEMA_NOT_STRICT: {
    on: PROCESS,
    retryable: false,
    meaning: "A tool's schema cannot be expressed in OpenAI's strict mode; the message names the location and why.",
  },
  PACK_INVALID: {
    on: PROCESS_AND_CLI,
    retryable: false,
    meaning: "A tool pack's shape, tools, roles or policy table are invalid; the message lists every problem.",
  },
  PACK_CONFIG_INVALID: {
    on: PROCESS_AND_CLI,
    retryable: false,
    meaning: "A variable of a tool pack's `config`, as read from the environment, is invalid; the message lists every problem.",
  },
  PACK_LOAD_FAILED: {
    on: PROCESS_AND_CLI,
    retryable: false,
    meaning: 'A tool pack cannot be imported or hosted: the service does not start.',
  },
  SIGNING_KEY_INVALID: {
    on: PROCESS,
    retryable: false,
    meaning: 'A signing key text cannot be used; the message names the problem, never the key material.',
  },
  SEALING_KEY_INVALID: {
    on: PROCESS,
    retryable: false,
    meaning: 'A sealing key text cannot be used; the message names the problem, never the key material.',
  },
  RUN_KEY_INVALID: { on: PROCESS, retryable: false, meaning: 'A run key cannot be used; the message never contains key material.' },
  RUN_KEY_MISSING: { on: PROCESS, retryable: false, meaning: 'A command was sent for a run whose key the sender does not hold.' },

  // What the `gatehouse` command reports besides the codes the services answer, which it passes on.
  USAGE: {
    on: CLI,
    retryable: false,
    meaning: 'The command line is wrong: an unknown command or option, a missing or malformed value, missing settings.',
  },
  FAILED: { on: CLI, retryable: false, meaning: 'The command failed for a reason its message gives.' },
  UNREACHABLE: {
    on: CLI,
    retryable: true,
    meaning: 'A service could not be reached (connection refused or no answer within `GATEHOUSE_CLI_TIMEOUT_MS`).',
  },
  NOT_JSON: { on: CLI, retryable: false, meaning: 'A service answered with a body that is not JSON (is the URL right?).' },
  KAFKA_UNREACHABLE: { on: CLI, retryable: true, meaning: 'No broker of `KAFKA_BROKERS` accepted a connection.' },
  KAFKA_FAILED: { on: CLI, retryable: true, meaning: "A Kafka request of the command failed; the message gives the broker's reason." },
  DLQ_READ_TIMEOUT: {
    on: CLI,
    retryable: true,
    meaning: 'The dead-letter topics were not read to their ends within `GATEHOUSE_DLQ_READ_TIMEOUT_MS`.',
  },
  NO_DLQ_TOPIC: { on: CLI, retryable: false, meaning: 'None of the dead-letter topics exists under the topic prefix given.' },
  RECORD_FAILED: { on: CLI, retryable: true, meaning: 'A trace could not be recorded; the message gives why.' },
  REPLAY_DIFFERS: {
    on: CLI,
    retryable: false,
    meaning: 'A replayed trace answered differently from the recording; the report lists each call.',
  },
  PACK_CHECK_FAILED: { on: CLI, retryable: false, meaning: '`pack check` found problems; the message lists each, by check.' },
  PACK_SETUP_FAILED: { on: CLI, retryable: false, meaning: 'A tool pack could not be set up to be checked; the message gives why.' },
  POLICY_TABLE_INVALID: { on: CLI, retryable: false, meaning: "A tool pack's policy table document is invalid; every problem is listed." },
  ROLES_INVALID: { on: CLI, retryable: false, meaning: "A tool pack's roles document is invalid; every problem is listed." },
  CONTRACT_CHANGED: {
    on: PROCESS,
    retryable: false,
    meaning:
      'A service holds a contract for a tool version that differs from the one first published under that version: it does not start. A changed contract needs a new version.',
  },
} as const satisfies Record<string, ErrorEntry>;

type Catalogue = typeof ERRORS;

/** Every code of the catalogue. */
export type GatehouseErrorCode = keyof Catalogue;

/** The codes answered on one surface. */
export type CodeOn<S extends ErrorSurface> = {
  [K in GatehouseErrorCode]: S extends Catalogue[K]['on'][number] ? K : never;
}[GatehouseErrorCode];

/** The entries of one surface, in catalogue order. */
export type EntriesOn<S extends ErrorSurface> = { readonly [K in CodeOn<S>]: Catalogue[K] };

/** The catalogue's entries answered on `surface`, in catalogue order, as one frozen object. */
export function entriesOn<S extends ErrorSurface>(surface: S): EntriesOn<S> {
  const picked: Record<string, ErrorEntry> = {};
  for (const [code, entry] of Object.entries(ERRORS) as [string, ErrorEntry][]) if (entry.on.includes(surface)) picked[code] = entry;
  return Object.freeze(picked) as EntriesOn<S>;
}

/** The codes of a result's `error` on `gatehouse.results`: what agents branch on. */
export const ErrorCode: EntriesOn<'results'> = entriesOn('results');
export type ErrorCode = CodeOn<'results'>;

/** Every result code in catalogue order (append-only). */
export const ERROR_CODE_LIST: readonly ErrorCode[] = Object.freeze(Object.keys(ErrorCode) as ErrorCode[]);

/** The HTTP APIs' own codes (besides the result codes they answer where the meaning is the same). */
export const ApiErrorCode: EntriesOn<'api'> = entriesOn('api');
export type ApiErrorCode = CodeOn<'api'>;
export const API_ERROR_CODE_LIST: readonly ApiErrorCode[] = Object.freeze(Object.keys(ApiErrorCode) as ApiErrorCode[]);

/** Every refusal of who an HTTP caller is, with its status. */
export const IDENTITY_REFUSALS: EntriesOn<'identity'> = entriesOn('identity');
export type IdentityRefusalCode = CodeOn<'identity'>;

/** Every refusal of a call by its system of record, with the status to answer. */
export const ASSERTION_REFUSALS: EntriesOn<'assertion'> = entriesOn('assertion');
export type AssertionRefusalCode = CodeOn<'assertion'>;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ErrorCode, value);
}

export function isGatehouseErrorCode(value: unknown): value is GatehouseErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERRORS, value);
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

/** The result codes' table of docs/errors.md: `| code | retryable | meaning |`, in catalogue order. */
export function errorCodeTableMarkdown(): string {
  const rows = ERROR_CODE_LIST.map((code) => {
    const entry: ErrorEntry = ErrorCode[code];
    return `| \`${code}\` | ${entry.retryable ? 'yes' : 'no'} | ${cell(entry.meaning)} |`;
  });
  return ['| code | retryable | meaning |', '|---|---|---|', ...rows].join('\n') + '\n';
}

/** One surface's table of docs/errors.md (`| code | HTTP | retryable | meaning |` where it answers HTTP), in catalogue order. */
export function surfaceTableMarkdown(surface: Exclude<ErrorSurface, 'results'>): string {
  const http = surface === 'api' || surface === 'identity' || surface === 'assertion';
  const rows = Object.entries(entriesOn(surface)).map(([code, entry]: [string, ErrorEntry]) => {
    const status = http ? ` ${entry.status ?? ''} |` : '';
    return `| \`${code}\` |${status} ${entry.retryable ? 'yes' : 'no'} | ${cell(entry.meaning)} |`;
  });
  const head = http ? ['| code | HTTP | retryable | meaning |', '|---|---|---|---|'] : ['| code | retryable | meaning |', '|---|---|---|'];
  return [...head, ...rows].join('\n') + '\n';
}
