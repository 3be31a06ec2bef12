// The one error catalogue of Gatehouse. Every `error.code` on `gatehouse.results` is a key of this
// object. The list is APPEND-ONLY: a code is never removed, renamed or reused for a new meaning,
// because agent runtimes branch on it. `retryable` is the default: whether an identical call can
// ever succeed. A producer may override it for one error (see `toolError`).

interface ErrorCodeEntry {
  readonly retryable: boolean;
  readonly meaning: string;
}

export const ErrorCode = {
  INVALID_ARGUMENT: { retryable: false, meaning: 'The arguments do not match the input schema of the tool version.' },
  TOOL_NOT_FOUND: {
    retryable: false,
    meaning: 'No tool is registered at this address; `next` names the live version when the name is known.',
  },
  TOOL_VERSION_RETIRED: { retryable: false, meaning: 'This tool version is retired for this run; `next` names the live version.' },
  CAPABILITY_DENIED: {
    retryable: false,
    meaning: 'The run may not call this tool or use this proposal; `permitted` lists what it may call and `next` what would serve.',
  },
  RUN_NOT_FOUND: { retryable: false, meaning: 'No active run has this id: it was never registered, has expired or was stopped.' },
  TENANT_MISMATCH: { retryable: false, meaning: 'The command, run, proposal or target belongs to another tenant.' },
  PAYLOAD_TOO_LARGE: { retryable: false, meaning: 'The serialized arguments exceed the size limit of the boundary.' },
  RATE_LIMITED: { retryable: true, meaning: 'The rate limit of the tool is exhausted; retry after `retryAfterMs`.' },
  APPROVAL_REJECTED: { retryable: false, meaning: 'An approver rejected the proposal; the message carries their reason.' },
  APPROVAL_EXPIRED: { retryable: false, meaning: 'The approval or its request expired before use; silence is never consent.' },
  PROPOSAL_NOT_FOUND: { retryable: false, meaning: 'No stored proposal has this id for this run.' },
  PROPOSAL_CONSUMED: { retryable: false, meaning: 'The proposal was already committed once; proposals are single use.' },
  ARGUMENTS_MISMATCH: { retryable: false, meaning: 'The canonical arguments no longer hash to the approved `arguments_sha256`.' },
  VERSION_CONFLICT: { retryable: false, meaning: 'The target changed after the proposal was created; read again and propose anew.' },
  IDEMPOTENCY_KEY_REUSED: { retryable: false, meaning: 'The idempotency key was already used with different arguments.' },
  TIMEOUT: { retryable: true, meaning: 'The tool did not answer within its timeout and nothing shows it took effect.' },
  OUTCOME_UNKNOWN: { retryable: false, meaning: 'A write may or may not have happened; an operator resolves it, nothing is invented.' },
  OUTPUT_INVALID: { retryable: false, meaning: 'The tool returned a result outside its output schema; nothing of it is released.' },
  RESULT_TOO_LARGE: { retryable: false, meaning: 'The result exceeds `maxResultBytes` of the tool version.' },
  NOT_FOUND: { retryable: false, meaning: 'The record the arguments refer to does not exist for this tenant.' },
  UPSTREAM_ERROR: { retryable: true, meaning: 'The system of record failed for a reason outside the contract.' },
  POLICY_DENIED: { retryable: false, meaning: 'The policy table denies this effect for this tool, environment and scope.' },
  WRITE_NOT_SUPPORTED: { retryable: false, meaning: 'Writes through this path are not available for this tool yet.' },
  IN_PROGRESS: { retryable: true, meaning: 'A call with the same idempotency key is executing now; retry later for its result.' },
  UNAUTHORIZED_APPROVER: { retryable: false, meaning: 'The approver lacks the authority the policy rule requires.' },
  SELF_APPROVAL: { retryable: false, meaning: 'The principal that requested the change cannot approve it.' },
  OPERATION_CANCELLED: { retryable: false, meaning: 'The operation was cancelled before it completed.' },
  TOOL_VERSION_UNAVAILABLE: {
    retryable: true,
    meaning:
      'The executor that took the order does not host this tool version (a rolling upgrade of the tool pack is under way); nothing ran, and `next` names the versions it hosts.',
  },
  IDEMPOTENCY_KEY_MISSING: {
    retryable: false,
    meaning:
      'A write order reached the executor without an idempotency key; nothing ran (the policy and approval services always give one).',
  },
  ORDER_NOT_TRUSTED: {
    retryable: false,
    meaning:
      'Not sent since signatures hold the ids: an order no policy or approval key signed goes to `gatehouse.execute.dlq` unanswered (its ids are whatever the forger wrote). Kept so that the code is never reused.',
  },
  APPROVAL_NOT_FOUND: {
    retryable: false,
    meaning:
      'The approval a write order names is not in the approval store (it carried none, or the record is gone); nothing ran: preview and ask for approval again.',
  },
  CREDENTIAL_REFUSED: {
    retryable: false,
    meaning:
      "No credential for the tool's system of record could be had (the tool declares no audience for its calls, or the IdP refused to exchange the person's token: none was handed over, or their session has ended), so nothing was sent.",
  },
  PROPOSAL_EXPIRED: {
    retryable: false,
    meaning: 'The proposal expired before it was committed; `next` names the preview that makes a new one.',
  },
  CONTRACT_MISMATCH: {
    retryable: false,
    meaning:
      'The executor hosts this tool version with another contract than the service that ordered the call (a pack changed under a published version, or two packs disagree): nothing ran. A changed tool needs a new version; an operator must bring the fleet onto one contract.',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof ErrorCode;

/** Every code in catalogue order (append-only). */
export const ERROR_CODE_LIST: readonly ErrorCode[] = Object.freeze(Object.keys(ErrorCode) as ErrorCode[]);

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ErrorCode, value);
}

/** The error table of docs/errors.md: `| code | retryable | meaning |`, one row per code in catalogue order. */
export function errorCodeTableMarkdown(): string {
  const rows = ERROR_CODE_LIST.map((code) => {
    const entry: ErrorCodeEntry = ErrorCode[code];
    return `| \`${code}\` | ${entry.retryable ? 'yes' : 'no'} | ${entry.meaning.replaceAll('|', '\\|')} |`;
  });
  return ['| code | retryable | meaning |', '|---|---|---|', ...rows].join('\n') + '\n';
}
