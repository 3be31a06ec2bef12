import { pollUntil } from './poll.js';

/** Who calls the approval API: a bearer token, a console session (its cookie, with the CSRF token a change needs), or nobody. */
type ApprovalCaller = string | null | { readonly cookie: string; readonly csrf?: string };

/** What a person was shown of a request, which their decision carries: the service refuses it if the stored request differs. */
interface ShownProposal {
  readonly arguments_sha256: string;
  readonly target_version: number | null;
}

interface DecideOptions {
  /** A rejection's reason (sent as given, so a test can send a bad one). */
  readonly reason?: string;
  /** Waits (bounded) until the caller can read the request: for one an agent has only just asked for. */
  readonly waitForRequest?: boolean;
  /** Sends these in place of what the read showed: a test of a stale or forged decision. */
  readonly shown?: Partial<ShownProposal>;
}

interface DecisionReply<T> {
  readonly status: number;
  readonly body: T;
}

/** A caller that cannot read the request was shown nothing: its decision carries a hash no request has. */
const NOTHING_SHOWN: ShownProposal = { arguments_sha256: '0'.repeat(64), target_version: null };

function callerHeaders(caller: ApprovalCaller): Record<string, string> {
  if (caller === null) return {};
  if (typeof caller === 'string') return { authorization: `Bearer ${caller}` };
  return { cookie: caller.cookie, ...(caller.csrf === undefined ? {} : { 'x-csrf-token': caller.csrf }) };
}

/** The part of a request (as the approval API shows it, or as the policy service asked) that a decision carries. */
export function shownIn(request: {
  readonly arguments_sha256: string;
  readonly target: { readonly version: number | null };
}): ShownProposal {
  return { arguments_sha256: request.arguments_sha256, target_version: request.target.version };
}

/**
 * Decides as a person in the console does: reads the request (GET /api/approvals/:id) as `caller`,
 * then posts the decision with the `arguments_sha256` and target version that read showed.
 */
export async function decideAs<T = Record<string, unknown>>(
  approvalUrl: string,
  proposalId: string,
  decision: 'approve' | 'reject',
  caller: ApprovalCaller,
  options: DecideOptions = {},
): Promise<DecisionReply<T>> {
  const url = `${approvalUrl}/api/approvals/${encodeURIComponent(proposalId)}`;
  const read = async (): Promise<ShownProposal | undefined> => {
    const response = await fetch(url, { headers: callerHeaders(caller) });
    if (response.status !== 200) return undefined;
    return shownIn(((await response.json()) as { request: Parameters<typeof shownIn>[0] }).request);
  };
  const shown =
    options.waitForRequest === true ? await pollUntil(read, 20_000, `request ${proposalId} in the approval service`, 25) : await read();
  const body = { ...(shown ?? NOTHING_SHOWN), ...options.shown, ...(options.reason === undefined ? {} : { reason: options.reason }) };
  const response = await fetch(`${url}/${decision}`, {
    method: 'POST',
    headers: { ...callerHeaders(caller), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}
