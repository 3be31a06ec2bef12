// The codes Gatehouse's HTTP APIs answer besides the tool codes (`ErrorCode`, which they use where
// the meaning is the same: NOT_FOUND, RUN_NOT_FOUND, SELF_APPROVAL, …) and the identity refusals of
// @gatehouse/identity (who the caller is). Every answer is `{ "error": { "code", "message", … } }`
// with the status named here. APPEND-ONLY, as the tool codes are: a client branches on `code`.

interface ApiErrorCodeEntry {
  readonly status: 400 | 409 | 422 | 500 | 503;
  readonly meaning: string;
}

export const ApiErrorCode = {
  INVALID_REQUEST: {
    status: 400,
    meaning: 'The request does not match the route (its body, query or headers); the message names the part.',
  },
  INTERNAL: { status: 500, meaning: 'The service failed unexpectedly; nothing of the cause is shown, the service logs it.' },
  RUN_EXISTS: { status: 409, meaning: 'A run with this `run_id` is already registered.' },
  UNKNOWN_ROLE: { status: 422, meaning: 'No role of this name; `permitted` lists the roles there are.' },
  TTL_TOO_LONG: { status: 422, meaning: 'The run would live longer than `GATEHOUSE_MAX_RUN_TTL_MS` allows.' },
  CAPABILITY_OUTSIDE_ROLE: {
    status: 422,
    meaning: 'A capability asked for is not a live tool of the role: a run is narrowed from its role, never widened.',
  },
  UNKNOWN_ISSUER: { status: 422, meaning: '`on_behalf_of` names a person of another issuer than the configured identity provider.' },
  SUBJECT_TOKEN_REFUSED: {
    status: 422,
    meaning:
      "The person's token handed to a run is not a live token of the identity provider for the executors' client (or this deployment exchanges no tokens).",
  },
  SUBJECT_MISMATCH: { status: 422, meaning: "The person's token names another person than `on_behalf_of`, or than the run acts for." },
  NOT_PENDING: { status: 409, meaning: 'The approval request was already decided or has expired; `state` says which.' },
  NOT_UNKNOWN: {
    status: 409,
    meaning: 'Retired: the operator API answered it until it answered `OUTCOME_ALREADY_KNOWN` instead; kept so it is never reused.',
  },
  OUTCOME_ALREADY_KNOWN: {
    status: 409,
    meaning:
      "The operation's outcome is already known (it succeeded or failed, or an operator resolved it meanwhile): there is nothing to resolve.",
  },
  STORE_UNCONFIRMED: {
    status: 503,
    meaning:
      'Redis did not confirm the change on the replicas `GATEHOUSE_REDIS_WAIT_REPLICAS` asks for in time, so nothing was published; the same request again is safe and completes it.',
  },
  PROPOSAL_MISMATCH: {
    status: 409,
    meaning:
      "A decision's `arguments_sha256` or `target_version` (what the person was shown) differs from the stored proposal: nothing was recorded; reload it and decide again.",
  },
  REQUEST_UNVERIFIED: {
    status: 409,
    meaning:
      'The stored approval request is no longer the one the policy service signed (its database row was changed): nobody can decide it, nothing was recorded, and the refusal is counted (`gatehouse_untrusted_records_total{kind="approvalsRequested"}`). The agent must propose again.',
  },
} as const satisfies Record<string, ApiErrorCodeEntry>;

export type ApiErrorCode = keyof typeof ApiErrorCode;

/** Every HTTP API code in catalogue order (append-only). */
export const API_ERROR_CODE_LIST: readonly ApiErrorCode[] = Object.freeze(Object.keys(ApiErrorCode) as ApiErrorCode[]);

/** The table of the HTTP APIs' own codes in docs/errors.md: `| code | HTTP | meaning |`, in catalogue order. */
export function apiErrorCodeTableMarkdown(): string {
  const rows = API_ERROR_CODE_LIST.map((code) => {
    const entry: ApiErrorCodeEntry = ApiErrorCode[code];
    return `| \`${code}\` | ${entry.status} | ${entry.meaning.replaceAll('|', '\\|')} |`;
  });
  return ['| code | HTTP | meaning |', '|---|---|---|', ...rows].join('\n') + '\n';
}
