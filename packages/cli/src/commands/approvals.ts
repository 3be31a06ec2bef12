import type { ApprovalRequest, Diff, RequestSummary, Target } from '@gatehouse/events';
import type { CommandGroup } from '../command.js';
import { usageError } from '../exit-code.js';
import { formatDuration, isoTime, relativeTime } from '../format.js';
import { HttpApi, segment } from '../http-api.js';
import type { Output } from '../output.js';
import { approvalApi } from '../settings.js';
import { signInSubcommand } from '../device-sign-in.js';

interface RequestDetail extends RequestSummary {
  readonly request: ApprovalRequest;
  /** On approve/reject: false when publishing the decision was left to the service's outbox. */
  readonly published?: boolean;
}

const STATES = ['pending', 'approved', 'rejected', 'expired'] as const;
/** The approval service accepts 1..500 characters. */
const REASON_MAX = 500;

const targetOf = (target: Target): string => `${target.type}:${target.id}${target.version === null ? '' : `@v${target.version}`}`;

function decisionOf(row: RequestSummary): string {
  if (row.state === 'pending') return row.may_decide ? 'you may decide' : `you may not: ${row.may_not_because ?? 'no authority'}`;
  if (row.decided_by === null) return row.state;
  return `${row.state} by ${row.decided_by}`;
}

function diffLines(diff: Diff): string[] {
  const lines = diff.changes.map((change) => `  ${change.field}: ${change.before ?? '(none)'} → ${change.after ?? '(none)'}`);
  if (diff.recipients.length > 0) lines.push(`  recipients: ${diff.recipients.join(', ')}`);
  if (diff.amount !== null) lines.push(`  amount: ${diff.amount.minor} ${diff.amount.currency} (minor units)`);
  lines.push(`  affected records: ${diff.affected_records}`);
  for (const consequence of diff.irreversible) lines.push(`  IRREVERSIBLE: ${consequence}`);
  return lines;
}

/** One request in full: the stored canonical request, exactly what an approval lets execute. */
function renderDetail(out: Output, row: RequestDetail): string {
  const { request } = row;
  // The server's clock decides expiry: time_left_ms is measured there.
  const left = row.state === 'pending' ? ` (${formatDuration(row.time_left_ms)} left)` : '';
  const fields: (readonly [string, string])[] = [
    ['proposal', row.proposal_id],
    ['state', row.state],
    ['tenant', row.tenant],
    ['run', request.run_id],
    ['principal', request.principal],
    [
      'on behalf of',
      request.on_behalf_of === null || request.on_behalf_of === undefined
        ? '(no person named)'
        : `${request.on_behalf_of.name ?? request.on_behalf_of.subject} (${request.on_behalf_of.subject} at ${request.on_behalf_of.issuer})`,
    ],
    ['tool', row.tool],
    ['environment', row.environment],
    ['target', targetOf(row.target)],
    ['effect', row.effect],
    ['approver role', `${row.approver_role} (rule ${request.rule_id})`],
    ['requested', isoTime(row.requested_at)],
    ['expires', `${isoTime(row.expires_at)}${left}`],
    ['decision', decisionOf(row)],
    ...(row.reason === null ? [] : [['reason', row.reason] as const]),
    ...(row.approval_id === null ? [] : [['approval', `${row.approval_id} valid until ${isoTime(row.approval_expires_at)}`] as const]),
    ['arguments sha256', row.arguments_sha256],
    ['arguments', request.arguments],
  ];
  return `${out.fields(fields)}changes:\n${diffLines(request.diff).join('\n')}\n`;
}

/**
 * Decides on a request as it is now: reads it, then sends its `arguments_sha256` and target version
 * with the decision, so the service refuses it (409 PROPOSAL_MISMATCH) should it differ from what was read.
 */
async function decide(api: HttpApi, proposalId: string, decision: 'approve' | 'reject', extra: object = {}): Promise<RequestDetail> {
  const path = `/api/approvals/${segment(proposalId)}`;
  const { request } = await api.get<RequestDetail>(path);
  return api.post<RequestDetail>(`${path}/${decision}`, {
    arguments_sha256: request.arguments_sha256,
    target_version: request.target.version,
    ...extra,
  });
}

function decided(out: Output, row: RequestDetail): void {
  out.result(row, () => `${row.proposal_id}: ${row.state}${row.decided_by === null ? '' : ` by ${row.decided_by}`}\n`);
  if (row.published === false) out.note('the decision is stored; the approval service will publish it from its outbox (HTTP 202)');
}

export const approvals: CommandGroup = {
  name: 'approvals',
  summary: 'list, inspect, approve and reject approval requests (approval API, as the approver of GATEHOUSE_APPROVER_TOKEN)',
  subcommands: [
    signInSubcommand('GATEHOUSE_APPROVER_TOKEN', 'approvals', 'approver'),
    {
      name: 'list',
      summary: 'requests of your tenants, newest first',
      options: {
        tenant: { type: 'string', value: 'tenant', description: 'one tenant (default: all of yours)' },
        state: { type: 'string', value: 'state', description: `${STATES.join(', ')} (default pending)` },
      },
      async run({ options, out, io }) {
        const state = options.string('state');
        if (state !== undefined && !(STATES as readonly string[]).includes(state))
          throw usageError(`--state must be one of ${STATES.join(', ')}, got "${state}"`);
        const answer = await new HttpApi(approvalApi(io.env)).get<{ approvals: RequestSummary[] }>('/api/approvals', {
          tenant: options.string('tenant'),
          state,
        });
        const now = io.now();
        out.result(answer.approvals, () =>
          out.table(
            [
              { header: 'PROPOSAL', cell: (r: RequestSummary) => r.proposal_id },
              { header: 'STATE', cell: (r) => r.state },
              { header: 'TENANT', cell: (r) => r.tenant },
              { header: 'TOOL', cell: (r) => r.tool },
              { header: 'ENV', cell: (r) => r.environment },
              { header: 'TARGET', cell: (r) => targetOf(r.target) },
              { header: 'EFFECT', cell: (r) => r.effect, max: 48 },
              { header: 'APPROVER ROLE', cell: (r) => r.approver_role },
              {
                header: 'EXPIRES',
                cell: (r) => (r.state === 'pending' ? `in ${formatDuration(r.time_left_ms)}` : relativeTime(r.expires_at, now)),
              },
              { header: 'DECISION', cell: decisionOf },
            ],
            answer.approvals,
          ),
        );
      },
    },
    {
      name: 'show',
      summary: 'one request in full: the stored canonical arguments, target, diff and decision',
      positionals: ['proposal_id'],
      async run({ arg, out, io }) {
        const row = await new HttpApi(approvalApi(io.env)).get<RequestDetail>(`/api/approvals/${segment(arg('proposal_id'))}`);
        out.result(row, () => renderDetail(out, row));
      },
    },
    {
      name: 'approve',
      summary: 'approve a pending request: its exact stored arguments may then execute once',
      positionals: ['proposal_id'],
      notes: [
        'Read it first: gatehouse approvals show <proposal_id>. The decision carries the arguments_sha256 and target version of the request as read just before it.',
        'Refusals exit 1 (403 no authority or self-approval, 409 already decided or expired, or PROPOSAL_MISMATCH when it differs from what was read).',
      ],
      async run({ arg, out, io }) {
        decided(out, await decide(new HttpApi(approvalApi(io.env)), arg('proposal_id'), 'approve'));
      },
    },
    {
      name: 'reject',
      summary: 'reject a pending request; the reason reaches the agent as a typed result',
      positionals: ['proposal_id'],
      options: { reason: { type: 'string', value: 'text', required: true, description: `why, 1..${REASON_MAX} characters` } },
      async run({ arg, options, out, io }) {
        const reason = options.required('reason').trim();
        if (reason.length === 0 || reason.length > REASON_MAX) throw usageError(`--reason must be 1..${REASON_MAX} characters`);
        decided(out, await decide(new HttpApi(approvalApi(io.env)), arg('proposal_id'), 'reject', { reason }));
      },
    },
  ],
};
