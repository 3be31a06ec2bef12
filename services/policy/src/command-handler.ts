import { createHash, randomUUID } from 'node:crypto';
import { addressOf, DeadLetters, errorResult, pendingResult } from '@gatehouse/events';
import type {
  AnswerScan,
  ApprovalRequest,
  ConsumedRecord,
  EventPublisher,
  PublishCondition,
  ExecutionOrder,
  RecordHeaders,
  ToolCommand,
  ToolResult,
} from '@gatehouse/events';
import { parseRun } from '@gatehouse/state';
import type { ClaimLedger, ClaimTerms, CommandEntry } from '@gatehouse/state';
import {
  annotateSpan,
  carriedHeaders as carryContext,
  endSpan,
  endSpanThrown,
  SPAN_ATTRIBUTES,
  startRecordSpan,
  traceIdOf,
  tracerFor,
} from '@gatehouse/telemetry';
import type { GatehouseMetrics, Logger, SpanOutcome, SpanScope, TraceContext } from '@gatehouse/telemetry';
import type { CommandProofs } from './command-proofs.js';
import { decide } from './decide.js';
import type { DecideDeps } from './decide.js';

/**
 * Headers that travel from the command to every event it causes: W3C trace context (naming the
 * policy service's span when `trace` holds it), the reply partition of the asking instance, and the
 * command's `sent_at` for the end-to-end latency measured where its result is published.
 */
function carriedHeaders(headers: RecordHeaders | undefined, sentAt?: number, trace?: TraceContext): RecordHeaders | undefined {
  return carryContext(headers, sentAt, trace);
}

const tracer = tracerFor('policy');

// How long a command_id stays claimed: past the call's deadline by a margin that covers a
// redelivery after a rebalance, and never longer than a day.
const CLAIM_AFTER_DEADLINE_MS = 10 * 60 * 1000;
const CLAIM_MAX_MS = 24 * 3600 * 1000;
/** How long a claim protects a command being handled before another worker may take it over. */
const CLAIM_LEASE_MS = 10_000;

/** What a command_id is claimed with: the hash of everything the runtime chose for the call. */
function commandPayloadSha256(command: ToolCommand): string {
  return createHash('sha256')
    .update(JSON.stringify([command.tool, command.arguments]))
    .digest('hex');
}

/** One event a decision publishes, as staged with the claim before it is published. */
interface Publication {
  readonly role: 'execute' | 'approvalsRequested' | 'results';
  readonly key: string;
  readonly event: ExecutionOrder | ApprovalRequest | ToolResult;
  readonly headers: RecordHeaders | undefined;
}

/** The command's entry in the claim ledger, as this handling holds it. */
interface HeldCommand {
  readonly entry: CommandEntry;
  readonly owner: string;
  readonly terms: ClaimTerms;
  /** How long the entry is remembered, should staging have to make it again. */
  readonly ttlMs: number;
}

/** The condition a held command's publications commit under: its claim renewed, inside the transaction. */
const stillHeld =
  (held: HeldCommand): PublishCondition =>
  () =>
    held.entry.renew(held.owner, held.terms.leaseMs);

/** What handling one command needs: the stores it decides with, where it publishes and reports. */
interface Handling {
  readonly deps: DecideDeps & { readonly ledger: ClaimLedger };
  readonly proofs: CommandProofs;
  readonly logger: Logger;
  readonly metrics: GatehouseMetrics;
  readonly deadLetters: DeadLetters;
  /** Publishes a decision's events in order, each committed only while `holds` (the claim's renewal) holds. */
  readonly publishAll: (publications: readonly Publication[], holds?: PublishCondition) => Promise<void>;
  /** What gatehouse.results holds of an answer: asked before a staged decision is published again. */
  readonly answers: Pick<AnswerScan, 'published'>;
}

/** decode (done by the consumer) → prove → claim → check → decide → stage → publish → answered, for one command. */
export function commandHandler(
  deps: DecideDeps & { readonly ledger: ClaimLedger },
  proofs: CommandProofs,
  publisher: EventPublisher,
  logger: Logger,
  metrics: GatehouseMetrics,
  answers: Pick<AnswerScan, 'published'>,
) {
  const deadLetters = new DeadLetters(publisher);

  const publishAll = async (publications: readonly Publication[], holds?: PublishCondition): Promise<void> => {
    // In order: an approval request before the pending answer that points people at it.
    for (const p of publications) await publisher.publish(p.role, p.key, p.event, p.headers, holds);
  };
  const handling: Handling = { deps, proofs, logger, metrics, deadLetters, publishAll, answers };

  /** One span per command: a child of the call's, and the parent of everything the decision publishes. */
  return async (command: ToolCommand, record: ConsumedRecord): Promise<void> => {
    const scope = startRecordSpan(tracer, `policy ${command.tool}`, record.headers, command);
    let outcome: SpanOutcome;
    try {
      outcome = await handle(handling, command, record, scope);
    } catch (error) {
      endSpanThrown(scope.span, error);
      throw error;
    }
    endSpan(scope.span, outcome);
  };
}

/** prove → claim → decide and publish (or publish the staged decision again) → answered, for one command, to how it ended. */
async function handle(handling: Handling, command: ToolCommand, record: ConsumedRecord, scope: SpanScope): Promise<SpanOutcome> {
  const { deps, proofs, logger, metrics, deadLetters, publishAll } = handling;
  const started = Date.now();
  const context = {
    command_id: command.command_id,
    run_id: command.run_id,
    tenant: command.tenant,
    tool: command.tool,
    trace_id: traceIdOf(record.headers),
  };
  // First the command proves its run: nothing is stored, claimed or answered for one that does not.
  const proof = await proofs.check(command, record.headers);
  if (proof.kind === 'no_run') return refuseUnclaimed(handling, command, record, context, scope);
  if (proof.kind === 'refused') {
    metrics.untrustedRecord('commands', proof.reason);
    const message = `the command does not prove its run (${proof.reason}): ${proof.detail}; it is not answered`;
    if (record.origin !== undefined) await deadLetters.send(record.origin, 'command_unproven', message);
    logger.warn(context, message);
    return { status: 'unproven', code: proof.reason };
  }
  // One command_id, one answer. The claim is per tenant and run (a run id cannot be guessed, so no
  // one can claim another run's ids first). A copy of a handled command (redelivered, or re-sent
  // by a client whose publish failed ambiguously) gets nothing more; another payload under a used
  // id gets no answer at all and is kept in the commands DLQ for operators.
  const payloadSha256 = commandPayloadSha256(command);
  const ttlMs = Math.min(CLAIM_MAX_MS, Math.max(0, (command.deadline_at ?? started + CLAIM_MAX_MS) - started) + CLAIM_AFTER_DEADLINE_MS);
  const entry = deps.ledger.commandEntry(command.tenant, command.run_id, command.command_id);
  // A fresh owner per handling: two copies of a command in this very process must not both decide it.
  const held: HeldCommand = {
    entry,
    owner: `policy/${randomUUID()}`,
    terms: { argumentsSha256: payloadSha256, leaseMs: CLAIM_LEASE_MS, commandId: command.command_id },
    ttlMs,
  };
  // Another worker that took a copy a moment ago is waited for, however long it lives: it answers
  // (nothing more to do here) or dies (its lease runs out, and this copy takes over).
  const found = await entry.claimWhenFree(held.terms, held.owner, ttlMs, Number.POSITIVE_INFINITY);
  const { claim } = found;
  if (claim.kind === 'in_progress') throw new Error('a claim waited for without a deadline is never in progress');
  if (claim.kind === 'settled' || claim.kind === 'unknown') {
    metrics.duplicateCommand('repeat');
    logger.info({ ...context, payload_sha256: payloadSha256 }, 'command already answered; this copy is ignored');
    return { status: 'repeat' };
  }
  if (claim.kind === 'no_run') return refuseUnclaimed(handling, command, record, context, scope);
  if (claim.kind === 'reused') {
    metrics.duplicateCommand('reused_id');
    const message = 'the command_id was already used by a command with another tool or arguments; this one is not answered';
    if (record.origin !== undefined) await deadLetters.send(record.origin, 'command_id_reused', message);
    logger.warn({ ...context, payload_sha256: payloadSha256 }, message);
    return { status: 'command_id_reused' };
  }
  let outcome: SpanOutcome | undefined;
  try {
    if (claim.kind === 'orphaned' && claim.staged !== undefined) {
      // Decided by a worker that stopped before it surely published: the same decision again, less
      // an answer the results topic shows that worker published already.
      const staged = JSON.parse(claim.staged) as Publication[];
      const again = await notOutYet(staged, handling.answers);
      await publishAll(again, stillHeld(held));
      logger.info({ ...context, answers_out: staged.length - again.length }, 'staged decision of a taken-over command published again');
      outcome = { status: 'staged_again' };
    } else {
      outcome = await decideAndPublish(handling, command, record, { run: found.run, held }, context, started, scope);
      // Another worker took the claim over and staged its decision first. It answers, unless it
      // dies before it has: this delivery is not done until the command is answered, so it goes
      // back to the claim, which waits for that worker's answer or takes its staged decision over.
      if (outcome === undefined) return await handle(handling, command, record, scope);
    }
  } catch (error) {
    // The consumer retries this record: an undecided claim is given back, a staged one keeps its decision.
    await entry.giveBack(held.owner).catch(() => undefined);
    throw error;
  }
  await entry.settle(held.owner, '');
  return outcome;
}

/** A staged decision's events, less each answer a trusted record on gatehouse.results shows out already. */
async function notOutYet(publications: readonly Publication[], answers: Pick<AnswerScan, 'published'>): Promise<Publication[]> {
  const kept: Publication[] = [];
  for (const p of publications) {
    if (p.role === 'results' && (await answers.published(p.key, p.event as ToolResult, p.headers)) === 'published') continue;
    kept.push(p);
  }
  return kept;
}

/**
 * A command naming a run that does not exist, which nothing was stored for: refused as it is
 * (`RUN_NOT_FOUND`, or `TIMEOUT` past its deadline), with no claim, stage or answered mark. A copy
 * of it is refused alike. What such a command costs is one read of Redis and one result.
 */
async function refuseUnclaimed(
  { deps, logger, metrics, publishAll }: Handling,
  command: ToolCommand,
  record: ConsumedRecord,
  context: Record<string, unknown>,
  scope: SpanScope,
): Promise<SpanOutcome> {
  const decision = await decide(command, { ...deps, runs: { get: () => Promise.resolve(undefined) } });
  if (decision.kind !== 'refuse') throw new Error(`a command naming no run was decided ${decision.kind}`);
  const result = errorResult(addressOf(command), decision.error, { argumentsSha256: decision.argumentsSha256 });
  await publishAll([
    { role: 'results', key: command.run_id, event: result, headers: carriedHeaders(record.headers, command.sent_at, scope.context) },
  ]);
  metrics.policyDecision(command.tool, 'refused', decision.error);
  metrics.resultPublished('policy', result, command.sent_at);
  logger.info({ ...context, code: decision.error.code }, 'refused: the run does not exist; nothing stored');
  return { status: 'error', code: decision.error.code };
}

/**
 * check → decide → stage → publish → report, for a command this worker has claimed, to how it
 * ended; undefined when another worker (which took the claim over from a slow one) staged its
 * decision first and answers.
 */
async function decideAndPublish(
  { deps, logger, metrics, publishAll }: Handling,
  command: ToolCommand,
  record: ConsumedRecord,
  { run, held }: { readonly run: string | null; readonly held: HeldCommand },
  context: Record<string, unknown>,
  started: number,
  scope: SpanScope,
): Promise<SpanOutcome | undefined> {
  // The run record came with the claim (one script): the boundary reads it from there.
  const prefetched = run === null ? undefined : parseRun(run);
  const runs = { get: (runId: string) => (runId === command.run_id ? Promise.resolve(prefetched) : deps.runs.get(runId)) };
  const decision = await decide(command, { ...deps, runs });
  const headers = carriedHeaders(record.headers, command.sent_at, scope.context);
  let publications: Publication[];
  if (decision.kind === 'execute') {
    // Signed as it is published (with the reply partition): the executor runs only orders a policy or approval key vouches for.
    publications = [{ role: 'execute', key: decision.order.tenant, event: decision.order, headers }];
  } else if (decision.kind === 'approval') {
    // The request first: a pending answer must never exist without the request a person can act on.
    const pending = pendingResult(addressOf(command), decision.pending, { argumentsSha256: decision.request.arguments_sha256 });
    publications = [
      { role: 'approvalsRequested', key: decision.request.tenant, event: decision.request, headers },
      { role: 'results', key: command.run_id, event: pending, headers },
    ];
  } else {
    const result = errorResult(addressOf(command), decision.error, { argumentsSha256: decision.argumentsSha256 });
    publications = [{ role: 'results', key: command.run_id, event: result, headers }];
  }
  // Staged before it is published: whoever takes over from here publishes this decision, not a new one.
  if ((await held.entry.stage(held.owner, JSON.stringify(publications), held.terms, held.ttlMs)) === 'taken') {
    logger.warn({ ...context }, 'another worker’s decision of this command was staged first; waiting for its answer');
    return undefined;
  }
  // Through a transactional publisher, each committed only while this worker still holds the command:
  // a worker that stalled and lost it publishes nothing, and the next one's scan waits for its open
  // transaction. (A plain publisher has no transaction and does not ask.)
  await publishAll(publications, stillHeld(held));
  if (decision.kind === 'execute') {
    metrics.policyDecision(decision.order.tool, 'routed');
    logger.info({ ...context, arguments_sha256: decision.order.arguments_sha256, ms: Date.now() - started }, 'routed to execution');
    annotateSpan(scope.span, () => ({
      [SPAN_ATTRIBUTES.decision]: 'routed',
      [SPAN_ATTRIBUTES.argumentsSha256]: decision.order.arguments_sha256,
    }));
    return { status: 'routed' };
  }
  if (decision.kind === 'approval') {
    metrics.policyDecision(decision.request.tool, 'approval_requested');
    logger.info(
      {
        ...context,
        proposal_id: decision.request.proposal_id,
        rule: decision.request.rule_id,
        arguments_sha256: decision.request.arguments_sha256,
      },
      'approval requested',
    );
    annotateSpan(scope.span, () => ({
      [SPAN_ATTRIBUTES.decision]: 'approval_requested',
      [SPAN_ATTRIBUTES.argumentsSha256]: decision.request.arguments_sha256,
      [SPAN_ATTRIBUTES.proposalId]: decision.request.proposal_id,
    }));
    return { status: 'pending_approval' };
  }
  metrics.policyDecision(command.tool, 'refused', decision.error);
  const result = publications[0]?.event as ToolResult;
  metrics.resultPublished('policy', result, command.sent_at);
  logger.info(
    { ...context, code: decision.error.code, field: decision.error.field, arguments_sha256: decision.argumentsSha256 },
    'refused',
  );
  annotateSpan(scope.span, () => ({
    [SPAN_ATTRIBUTES.decision]: 'refused',
    ...(typeof decision.argumentsSha256 !== 'string' ? {} : { [SPAN_ATTRIBUTES.argumentsSha256]: decision.argumentsSha256 }),
  }));
  return { status: 'error', code: decision.error.code };
}
