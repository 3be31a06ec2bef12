import type { OperatorHandoff, ToolResult } from '@gatehouse/events';
import { ASSERTION_CLOCK_TOLERANCE_S } from '@gatehouse/identity';
import { SlotPool } from '@gatehouse/state';
import type { RefusedCall } from '../customers-harness.js';
import type { Gatehouse } from './gatehouse.js';
import { CallKind, CallOutcome } from './mixed-load.js';
import type { Customer, MixedLoad } from './mixed-load.js';
import { pollUntil } from './poll.js';
import type { TopicLedger } from './topic-ledger.js';

/** What a fault run comes to, checked against PostgreSQL, the results and operator topics and Redis. */
export interface LoadFigures {
  commands: number;
  /** Published by the client (the broker took them). */
  accepted: number;
  /** The client could not publish them; not counted as lost. */
  notAccepted: number;
  /** Of those, how many reached the topic anyway (the broker kept a send the client gave up on) and were answered. */
  notAcceptedYetAnswered: number;
  /** Accepted commands the client stopped waiting for; each must still be answered on the results topic. */
  clientTimeouts: number;
  clientTimeoutsAnsweredOnTopic: number;
  /** Accepted commands with exactly one distinct terminal result on the topic. */
  answered: number;
  /** Terminal results on the topic beyond the first of their command (identical repeats unless `conflicting`). */
  duplicates: number;
  /** Commands with two different terminal results (other than `repeatedPreviews`). Must be 0. */
  conflicting: number;
  /**
   * Previews executed twice after a crash or redelivery: two ok results for one command that differ
   * only in the proposal they stored (proposal_id, expires_at). Must be 0: the next owner repeats
   * the answer the previous one staged.
   */
  repeatedPreviews: number;
  /** Commands whose client answer differs from the topic's. Must be 0. */
  answerMismatches: number;
  /** Accepted commands with neither a terminal result nor an operator handoff. Must be 0. */
  lost: number;
  handoffs: number;
  previews: number;
  commits: number;
  /** Customers whose address change was applied (version 2) and the idempotency keys PostgreSQL recorded with it. */
  applied: number;
  appliedKeys: number;
  /** Customers changed more than once (version > 2). Must be 0. */
  appliedTwice: number;
  /** Customers whose version contradicts their commit's answer (ok yet unchanged, refused yet changed). Must be 0. */
  contradictions: number;
  codes: Record<string, number>;
  /** Slot leases still live once every lease must have been released or expired. Must be 0. */
  slotsInUse: number;
  /** Writes the customers service was sent more than once under one key (re-sent orphans, retries). */
  resentWrites: number;
  /**
   * Requests the customers service refused for their call assertion, other than `lateCalls`. Must
   * be 0: every call Gatehouse makes carries a fresh, valid assertion of its own.
   */
  refusedCalls: number;
  /**
   * Requests refused ASSERTION_EXPIRED: they reached the service past their assertion's lifetime
   * and its clock tolerance. An executor mints an assertion to outlive the handler's timeout (and
   * the call's deadline) by 5 s, so the handler's timeout had passed 10 s before and the executor
   * gives the request up: a read tries again with a fresh assertion, a write goes to its status query. Refusing them is the service doing its job
   * on an overloaded machine; the audit still requires each of their calls answered once.
   */
  lateCalls: number;
}

export interface LoadAudit {
  readonly figures: LoadFigures;
  /** The first terminal code (`ok` or the error code) of each command answered on the topic. */
  readonly codeOf: ReadonlyMap<string, string>;
  /** Up to 20 examples per problem, for failure messages. */
  readonly examples: Record<
    | 'lost'
    | 'repeated'
    | 'conflicting'
    | 'repeatedPreviews'
    | 'answerMismatches'
    | 'contradictions'
    | 'appliedTwice'
    | 'refusedCalls'
    | 'reusedAssertions'
    | 'late',
    string[]
  >;
}

const fingerprint = (r: ToolResult): string => `${r.status}|${r.result ?? ''}|${r.error?.code ?? ''}`;
const codeOf = (r: ToolResult): string => (r.status === 'ok' ? 'ok' : (r.error?.code ?? r.status));

/** The same preview computed twice: both ok, equal but for the proposal each stored. */
function samePreview(results: readonly ToolResult[]): boolean {
  const effects = new Set(
    results.map((r) => {
      if (r.status !== 'ok' || r.result === null) return `not ok: ${r.status}`;
      const effect = JSON.parse(r.result) as Record<string, unknown>;
      delete effect['proposal_id'];
      delete effect['expires_at'];
      return JSON.stringify(effect);
    }),
  );
  return effects.size === 1 && ![...effects][0]?.startsWith('not ok');
}

/**
 * A refusal of a request that came past its assertion's lifetime: `ASSERTION_EXPIRED` at least the
 * verifier's clock tolerance past `exp`, so at least that long after its executor gave it up.
 */
export function isLate(r: RefusedCall): boolean {
  return r.code === 'ASSERTION_EXPIRED' && (r.pastExpiryMs ?? 0) >= ASSERTION_CLOCK_TOLERANCE_S * 1000;
}

/** Waits (bounded) until no lease is live in any of the scopes; resolves with what is still held then. */
export async function slotsHeld(g: Gatehouse, scopes: readonly string[], timeoutMs: number): Promise<number> {
  const slots = new SlotPool(g.redis, g.keys);
  const started = Date.now();
  for (;;) {
    const held = (await Promise.all(scopes.map((s) => slots.inUse(s)))).reduce((a, b) => a + b, 0);
    if (held === 0 || Date.now() - started > timeoutMs) return held;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function auditLoad(
  g: Gatehouse,
  load: MixedLoad,
  customers: readonly Customer[],
  results: TopicLedger<ToolResult>,
  handoffs: TopicLedger<OperatorHandoff>,
  slotsInUse: number,
): Promise<LoadAudit> {
  const terminal = new Map<string, ToolResult[]>();
  /** Where each terminal record of a command sits: partition@offset, and who signed it. */
  const placed = new Map<string, string[]>();
  for (const record of results.records) {
    const event = record.value;
    if (event === undefined || event.status === 'pending_approval' || !load.calls.has(event.command_id)) continue;
    const list = terminal.get(event.command_id) ?? [];
    list.push(event);
    terminal.set(event.command_id, list);
    const signer = record.headers?.['gatehouse-key-id']?.toString() ?? '?';
    placed.set(event.command_id, [...(placed.get(event.command_id) ?? []), `${record.partition}@${record.offset} by ${signer}`]);
  }
  const handedOff = new Set(handoffs.records.flatMap((r) => (r.value === undefined ? [] : [r.value.command_id])));
  const examples: LoadAudit['examples'] = {
    lost: [],
    repeated: [],
    conflicting: [],
    repeatedPreviews: [],
    answerMismatches: [],
    contradictions: [],
    appliedTwice: [],
    refusedCalls: [],
    reusedAssertions: [],
    late: [],
  };
  const note = (kind: keyof LoadAudit['examples'], text: string): void => {
    if (examples[kind].length < 20) examples[kind].push(text);
  };

  const figures: LoadFigures = {
    commands: load.calls.size,
    accepted: 0,
    notAccepted: 0,
    notAcceptedYetAnswered: 0,
    clientTimeouts: 0,
    clientTimeoutsAnsweredOnTopic: 0,
    answered: 0,
    duplicates: 0,
    conflicting: 0,
    repeatedPreviews: 0,
    answerMismatches: 0,
    lost: 0,
    handoffs: 0,
    previews: load.of(CallKind.preview).length,
    commits: load.of(CallKind.commit).length,
    applied: 0,
    appliedKeys: 0,
    appliedTwice: 0,
    contradictions: 0,
    codes: {},
    slotsInUse,
    resentWrites: 0,
    refusedCalls: 0,
    lateCalls: 0,
  };
  await g.customers.settled();
  figures.lateCalls = g.customers.refused.filter(isLate).length;
  const refused = g.customers.refused.filter((r) => !isLate(r));
  figures.refusedCalls = refused.length;
  for (const refusal of refused.slice(0, 20)) {
    const answer = terminal.get(refusal.commandId ?? '')?.[0];
    note(
      'refusedCalls',
      `${refusal.method} ${refusal.url} → ${refusal.status} ${refusal.code}, jti ${refusal.jti ?? '-'}, ` +
        `${refusal.sinceIssuedMs ?? '-'} ms after it was issued, ${refusal.pastExpiryMs ?? '-'} ms past its expiry, command ${refusal.commandId ?? '-'} answered ${answer === undefined ? 'nothing' : codeOf(answer)}`,
    );
  }
  // A write sent again under its key (its owner died, or the service asked for a retry) carries
  // the same key and an assertion of its own: a jti is never presented twice.
  const jtisByKey = new Map<string, string[]>();
  for (const served of g.customers.served) {
    if (served.call !== 'write' || served.idempotencyKey === undefined) continue;
    jtisByKey.set(served.idempotencyKey, [...(jtisByKey.get(served.idempotencyKey) ?? []), served.jti]);
  }
  for (const [key, jtis] of jtisByKey) {
    if (jtis.length > 1) figures.resentWrites += 1;
    if (new Set(jtis).size < jtis.length) note('reusedAssertions', `${key}: ${jtis.length} requests, ${new Set(jtis).size} assertions`);
  }
  for (const call of load.calls.values()) {
    const records = terminal.get(call.commandId) ?? [];
    const distinct = new Set(records.map(fingerprint));
    const first = records[0];
    if (first !== undefined) figures.codes[codeOf(first)] = (figures.codes[codeOf(first)] ?? 0) + 1;
    figures.duplicates += Math.max(0, records.length - 1);
    if (records.length > 1)
      note(
        'repeated',
        `${call.commandId}: ${records.length} records (${(placed.get(call.commandId) ?? []).join(', ')}), completed_at ${records.map((r) => String(r.completed_at)).join(' / ')}`,
      );
    if (distinct.size > 1 && call.kind === CallKind.preview && samePreview(records)) {
      figures.repeatedPreviews += 1;
      note('repeatedPreviews', `${call.commandId}: ${records.length} results, ${distinct.size} proposals`);
    } else if (distinct.size > 1) {
      figures.conflicting += 1;
      note('conflicting', `${call.commandId}: ${[...distinct].map((f) => f.slice(0, 80)).join(' ≠ ')}`);
    }
    if (handedOff.has(call.commandId)) figures.handoffs += 1;
    if (call.outcome === CallOutcome.notAccepted) {
      figures.notAccepted += 1;
      if (first !== undefined) figures.notAcceptedYetAnswered += 1;
      continue;
    }
    figures.accepted += 1;
    if (first === undefined && !handedOff.has(call.commandId)) {
      figures.lost += 1;
      note('lost', `${call.commandId} (${call.tool}, client: ${call.outcome})`);
      continue;
    }
    if (distinct.size === 1 || (call.kind === CallKind.preview && samePreview(records))) figures.answered += 1;
    if (call.outcome === CallOutcome.clientTimeout) {
      figures.clientTimeouts += 1;
      if (first !== undefined) figures.clientTimeoutsAnsweredOnTopic += 1;
      note(
        'late',
        `${call.commandId} (${call.tool}): sent at ${call.startedAt}, answered ${first === undefined ? 'never' : `${first.completed_at - call.startedAt} ms later (completed_at)`} at ${(placed.get(call.commandId) ?? []).join(', ')}`,
      );
    }
    const answer = call.answer;
    if (call.outcome === CallOutcome.answered && answer !== undefined && first !== undefined) {
      const said = answer.ok ? 'ok' : answer.error.code;
      if (said !== codeOf(first)) {
        figures.answerMismatches += 1;
        note('answerMismatches', `${call.commandId}: client ${said}, topic ${codeOf(first)}`);
      }
    }
  }

  const { rows } = await g.customers.db.query<{ id: string; version: number }>(
    `select id, version from ${g.customers.t.customers} where id = any($1)`,
    [customers.map((c) => c.id)],
  );
  const keys = await g.customers.db.query<{ n: string }>(
    `select count(*) as n from ${g.customers.t.idempotencyKeys} where status = 'succeeded' and operation = 'address_change' and target_id = any($1)`,
    [customers.map((c) => c.id)],
  );
  figures.appliedKeys = Number(keys.rows[0]?.n ?? 0);
  for (const row of rows) {
    const version = Number(row.version);
    if (version >= 2) figures.applied += 1;
    if (version > 2) {
      figures.appliedTwice += 1;
      note('appliedTwice', `${row.id} at version ${version}`);
    }
    const commitId = load.commitOf.get(row.id);
    const first = commitId === undefined ? undefined : terminal.get(commitId)?.[0];
    const code = first === undefined ? 'none' : codeOf(first);
    const unsure = code === 'OUTCOME_UNKNOWN' || (commitId !== undefined && handedOff.has(commitId));
    if (version === 2 && code !== 'ok' && !unsure) {
      figures.contradictions += 1;
      note('contradictions', `${row.id} changed, yet its commit ${commitId ?? '(never sent)'} answered ${code}`);
    }
    if (version === 1 && code === 'ok') {
      figures.contradictions += 1;
      note('contradictions', `${row.id} unchanged, yet its commit ${commitId ?? ''} answered ok`);
    }
  }
  const codeOfCommand = new Map([...terminal].flatMap(([id, list]) => (list[0] === undefined ? [] : [[id, codeOf(list[0])] as const])));
  return { figures, codeOf: codeOfCommand, examples };
}

/**
 * Waits (bounded) until every call the client stopped waiting for has a terminal result on the
 * topic; resolves with how many still have none (the audit then counts them lost).
 */
export async function awaitLateAnswers(load: MixedLoad, results: TopicLedger<ToolResult>, timeoutMs: number): Promise<number> {
  const answered = new Set<string>();
  let read = 0;
  const waiting = [...load.calls.values()].filter((c) => c.outcome === CallOutcome.clientTimeout).map((c) => c.commandId);
  const left = (): number => {
    for (; read < results.records.length; read += 1) {
      const event = results.records[read]?.value;
      if (event !== undefined && event.status !== 'pending_approval') answered.add(event.command_id);
    }
    return waiting.filter((id) => !answered.has(id)).length;
  };
  return pollUntil(() => Promise.resolve(left() === 0 ? 0 : undefined), timeoutMs, 'late answers').catch(() => left());
}

/** One line of figures for the CI log. */
export function summaryLine(name: string, f: LoadFigures, extra: Record<string, unknown> = {}): string {
  const parts = [
    `commands ${f.commands}`,
    `accepted ${f.accepted}`,
    `not accepted ${f.notAccepted} (answered anyway ${f.notAcceptedYetAnswered})`,
    `client timeouts ${f.clientTimeouts} (answered on the topic ${f.clientTimeoutsAnsweredOnTopic})`,
    `answered once ${f.answered}`,
    `duplicates ${f.duplicates}`,
    `conflicting ${f.conflicting}`,
    `previews run twice ${f.repeatedPreviews}`,
    `lost ${f.lost}`,
    `handoffs ${f.handoffs}`,
    `previews ${f.previews}`,
    `commits ${f.commits}`,
    `applied ${f.applied} (keys ${f.appliedKeys})`,
    `applied twice ${f.appliedTwice}`,
    `contradictions ${f.contradictions}`,
    `slots leaked ${f.slotsInUse}`,
    `writes sent again under their key ${f.resentWrites}`,
    `calls refused by the system of record ${f.refusedCalls}`,
    `calls it refused as late ${f.lateCalls}`,
    `codes ${JSON.stringify(f.codes)}`,
    ...Object.entries(extra).map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`),
  ];
  return `${name}: ${parts.join(', ')}`;
}
