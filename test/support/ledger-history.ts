import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LedgerStep } from '@gatehouse/state';
import { replayHistory } from '../../packages/state/model/history.mjs';
import type { HistoryStep } from '../../packages/state/model/history.mjs';

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;

/** A ledger step as a process recorded it (GATEHOUSE_LEDGER_HISTORY): the step, which process took it, and when (ms). */
export interface RecordedStep extends LedgerStep {
  readonly process: string;
  readonly at: number;
}

/**
 * A Redis master killed and its replica promoted while the history was recorded: the kill came
 * after `killedAt`, and the replica served as master by `promotedAt` (this machine's clock, ms).
 */
export interface Failover {
  readonly killedAt: number;
  readonly promotedAt: number;
}

/** A new file for a test's ledger history, under test-artifacts/ (kept, for a failure to be read afterwards). */
export function ledgerHistoryFile(label: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, `ledger-${label}-${randomUUID().slice(0, 8)}.jsonl`);
}

/** Whether a step changed its entry (and so raised its version), by the script's reply. */
function changed(step: LedgerStep): boolean {
  if (step.op === 'claim') return step.reply === 'claimed' || step.reply === 'orphaned';
  if (step.op === 'stage') return step.reply === 'staged';
  return step.reply === 'done' || step.reply === 'resolved';
}

/** An entry's recorded steps in the order Redis took them, and where a killed process leaves them unknowable. */
interface RecordedEntry {
  steps: RecordedStep[];
  /**
   * Set when a process noted an attempt on the entry whose step it never recorded (it was killed
   * while the script ran or its reply was on the way): that step may have happened, so only the steps
   * up to this version (the last its owner did record there) can be replayed.
   */
  cutAfter?: number;
  /** When the first of those attempts was noted (ms): across a failover, steps are cut by time, not version. */
  cutAt?: number;
}

/**
 * The steps of a recorded history, entry by entry, each entry's steps in the order Redis took them:
 * by the entry's version; of steps at one version, the one that made it first (a step that changed
 * nothing reports the version it saw), then in the order they were recorded.
 */
function entriesOf(path: string): Map<string, RecordedEntry> {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as RecordedStep);
  const entries = new Map<string, RecordedEntry>();
  /** Attempts still waiting for their step, by process, entry, operation and owner: when each was noted, oldest first. */
  const pending = new Map<string, number[]>();
  const tag = (s: RecordedStep): string => JSON.stringify([s.process, s.entry, s.op, s.owner]);
  for (const step of lines) {
    const waiting = pending.get(tag(step)) ?? [];
    pending.set(tag(step), waiting);
    if (step.reply === 'attempted') {
      waiting.push(step.at);
      continue;
    }
    waiting.shift();
    const entry = entries.get(step.entry) ?? { steps: [] };
    entry.steps.push(step);
    entries.set(step.entry, entry);
  }
  for (const [key, times] of pending) {
    if (times.length === 0) continue;
    const [, name, , owner] = JSON.parse(key) as [string, string, string, string];
    const entry = entries.get(name) ?? { steps: [] };
    entries.set(name, entry);
    // Owners are per delivery: what the killed delivery recorded on the entry is known; after that, nothing is.
    const last = Math.max(-1, ...entry.steps.filter((s) => s.owner === owner).map((s) => s.version));
    entry.cutAfter = Math.min(entry.cutAfter ?? Infinity, last);
    entry.cutAt = Math.min(entry.cutAt ?? Infinity, ...times);
  }
  for (const entry of entries.values()) entry.steps = inRedisOrder(entry.steps);
  return entries;
}

/** Steps of one entry in the order Redis took them (see entriesOf). */
function inRedisOrder(steps: readonly RecordedStep[]): RecordedStep[] {
  const recorded = new Map(steps.map((step, i) => [step, i]));
  return [...steps].sort(
    (a, b) => a.version - b.version || Number(changed(b)) - Number(changed(a)) || (recorded.get(a) ?? 0) - (recorded.get(b) ?? 0),
  );
}

/**
 * Whether a step counts only once a replica holds it (LuaScript.runDurable): a claim or a stage
 * that changed the entry, a resolution, and settling an unknown outcome. A failover keeps every such
 * step recorded before it, and so everything before that step too: replication is in order.
 */
function durable(step: RecordedStep): boolean {
  if (!changed(step)) return false;
  return step.op === 'claim' || step.op === 'stage' || step.op === 'resolve' || (step.op === 'settle' && step.detail === 'unknown');
}

/**
 * The ways an entry's recorded steps may have reached the promoted replica. Steps recorded before
 * the kill are `before`, after the promotion `after`; the new master holds some of `before` (all up
 * to its last durable step, and perhaps some or all after), and `after` follows from there. Each
 * candidate keeps `kept` of `before`, the most first. An entry with a step recorded between the kill
 * and the promotion (a reply the old master sent just before it died, or the new master just after
 * it took over; the clock cannot tell) is checked only up to the kill (`cut`).
 */
function acrossFailover(steps: readonly RecordedStep[], failover: Failover): { candidates: RecordedStep[][]; cut: boolean } {
  const before = inRedisOrder(steps.filter((s) => s.at < failover.killedAt));
  const after = inRedisOrder(steps.filter((s) => s.at > failover.promotedAt));
  if (before.length + after.length < steps.length) return { candidates: [before], cut: true };
  if (before.length === 0 || after.length === 0) return { candidates: [[...before, ...after]], cut: false };
  const lastDurable = before.findLastIndex(durable);
  const candidates: RecordedStep[][] = [];
  for (let kept = before.length; kept > lastDurable; kept -= 1) candidates.push([...before.slice(0, kept), ...after]);
  return { candidates, cut: false };
}

const CLAIM_REPLIES: Readonly<Record<string, string>> = {
  claimed: 'claimed',
  settled: 'stored',
  unknown: 'unknown',
  in_progress: 'in_progress',
};

/**
 * A recorded step as the model's replay names it; undefined for a step the model's ledger has no
 * counterpart of (a claim of another payload's entry, or of a run that does not exist: neither
 * changes anything).
 */
function modelStep(step: RecordedStep): HistoryStep | undefined {
  const { entry: key, owner, answer } = step;
  const withAnswer = answer === undefined ? {} : { answer };
  switch (step.op) {
    case 'claim': {
      if (step.reply === 'orphaned')
        return { key, op: 'claim', owner, reply: step.detail === 'staged' ? 'orphaned_staged' : 'orphaned', ...withAnswer };
      const reply = CLAIM_REPLIES[step.reply];
      return reply === undefined ? undefined : { key, op: 'claim', owner, reply, ...withAnswer };
    }
    case 'stage':
      return { key, op: 'stage', owner, reply: step.reply, answer: answer ?? '' };
    case 'settle':
      return {
        key,
        op: 'settle',
        owner,
        reply: step.reply === 'done' ? 'settled' : 'refused',
        answer: answer ?? '',
        unknown: step.detail === 'unknown',
      };
    case 'renew':
      return { key, op: 'renew', owner, reply: step.reply === 'done' ? 'renewed' : 'lost' };
    case 'give_back':
      return { key, op: 'give_back', owner, reply: step.reply === 'done' ? 'given_back' : 'refused' };
    case 'resolve':
      return { key, op: 'resolve', reply: step.reply, answer: answer ?? '' };
    case 'mark_published':
      return { key, op: 'mark_published', reply: 'marked' };
  }
}

/** What checking a recorded history against the model found. */
export interface HistoryCheck {
  readonly entries: number;
  /** Steps replayed; `skipped` steps have no counterpart in the model (they change nothing). */
  readonly steps: number;
  readonly skipped: number;
  /** Entries checked only up to a step a process noted but never recorded (killed while the script ran, or its reply lost; see RecordedEntry.cutAfter). */
  readonly cut: number;
  /** Across a failover: entries checked only up to the kill, having a step recorded between the kill and the promotion. */
  readonly upToKill: number;
  /** Across a failover: entries allowed only once some steps recorded before it are taken back, and how many steps. */
  readonly takenBack: { readonly entries: number; readonly steps: number };
  /** The first step the model does not allow, with its entry's steps up to it; undefined when every step is allowed. */
  readonly refused?: { readonly entry: string; readonly ledger: string; readonly steps: readonly string[] };
}

/** The keys, owners and answers one replay may name (the model numbers each in a byte). */
const REPLAY_LIMIT = 200;

/** One entry in a replay: the ways its steps may have happened (more than one only across a failover), and the one tried now. */
interface Replayed {
  readonly entry: string;
  readonly candidates: readonly (readonly RecordedStep[])[];
  tried: number;
}

const modelOf = (recorded: readonly RecordedStep[]): HistoryStep[] =>
  recorded.map(modelStep).filter((s): s is HistoryStep => s !== undefined);

/**
 * Replays every entry of a recorded history against the model's ledger (SPIN, in simulation, on
 * the same transitions the model checker explores): each recorded reply must be the one the model
 * gives to that operation in that state. Entries are independent, so they are replayed side by
 * side, as many at once as one replay can name. Across a Redis `failover`, the promoted replica may
 * lack the steps its master took last (replication is asynchronous; only durable steps wait for the
 * replica): an entry is allowed when its steps after the failover follow from some part of its steps
 * before it that keeps every durable one, the most steps tried first.
 */
export async function checkLedgerHistory(path: string, failover?: Failover): Promise<HistoryCheck> {
  const entries = entriesOf(path);
  let steps = 0;
  let skipped = 0;
  let cut = 0;
  let upToKill = 0;
  const takenBack = { entries: 0, steps: 0 };
  let batch: Replayed[] = [];
  const names = { owners: new Set<string>(), answers: new Set<string>() };
  const counted = (e: Replayed): void => {
    const recorded = e.candidates[e.tried] ?? [];
    const model = modelOf(recorded);
    skipped += recorded.length - model.length;
    steps += model.length;
    if (e.tried > 0) {
      takenBack.entries += 1;
      takenBack.steps += (e.candidates[0]?.length ?? 0) - recorded.length;
    }
  };
  /** Replays the batch; an entry refused that has another way to try is tried that way, and the batch again. */
  const replay = async (): Promise<HistoryCheck['refused']> => {
    for (;;) {
      const models = batch.map((e) => modelOf(e.candidates[e.tried] ?? []));
      const history = models.flat();
      const found = history.length === 0 ? ({ allowed: true, steps: 0 } as const) : await replayHistory(history);
      if (found.allowed) break;
      const refused = history[found.step] as HistoryStep;
      const at = models.findIndex((m) => m.includes(refused));
      const entry = batch[at];
      if (entry !== undefined && entry.tried + 1 < entry.candidates.length) {
        entry.tried += 1;
        continue;
      }
      const model = models[at] ?? [];
      const recorded = (entry?.candidates[entry.tried] ?? []).filter((x) => modelStep(x) !== undefined);
      batch = [];
      return {
        entry: entry?.entry ?? '?',
        ledger: `recorded ${found.op} → ${found.recorded}, the model answers ${found.ledger}`,
        steps: model.slice(0, model.indexOf(refused) + 1).map((s, i) => {
          const r = recorded[i];
          return `${s.op} ${s.owner ?? ''} → ${s.reply}${r === undefined ? '' : ` (${r.process}, v${r.version})`}`;
        }),
      };
    }
    batch.forEach(counted);
    batch = [];
    names.owners.clear();
    names.answers.clear();
    return undefined;
  };
  const result = (refused?: HistoryCheck['refused']): HistoryCheck => ({
    entries: entries.size,
    steps,
    skipped,
    cut,
    upToKill,
    takenBack,
    ...(refused === undefined ? {} : { refused }),
  });
  for (const [entry, { steps: all, cutAfter, cutAt }] of entries) {
    let candidates: RecordedStep[][];
    if (failover === undefined) {
      candidates = [cutAfter === undefined ? all : all.filter((s) => s.version <= cutAfter)];
      if (cutAfter !== undefined) cut += 1;
    } else {
      const across = acrossFailover(cutAt === undefined ? all : all.filter((s) => s.at < cutAt), failover);
      candidates = across.candidates;
      if (cutAt !== undefined) cut += 1;
      else if (across.cut) upToKill += 1;
    }
    for (const candidate of candidates)
      for (const s of modelOf(candidate)) {
        if (s.owner !== undefined) names.owners.add(s.owner);
        if (s.answer !== undefined) names.answers.add(s.answer);
      }
    batch.push({ entry, candidates, tried: 0 });
    if (batch.length >= REPLAY_LIMIT / 2 || names.owners.size >= REPLAY_LIMIT || names.answers.size >= REPLAY_LIMIT) {
      const refused = await replay();
      if (refused !== undefined) return result(refused);
    }
  }
  return result(await replay());
}

/** One line for a test's log: how much of the history was replayed, and the first step refused. */
export function historyLine(name: string, check: HistoryCheck): string {
  const failover =
    check.upToKill === 0 && check.takenBack.entries === 0
      ? ''
      : `, ${check.upToKill} checked up to the failover's kill, ${check.takenBack.entries} allowed with ${check.takenBack.steps} steps taken back by it`;
  const head = `${name}: ledger history: ${check.entries} entries, ${check.steps} steps replayed against the model, ${check.skipped} without a counterpart, ${check.cut} checked up to a step never recorded${failover}`;
  if (check.refused === undefined) return `${head}; every step allowed`;
  return `${head}; REFUSED at ${check.refused.entry}: ${check.refused.ledger}\n  ${check.refused.steps.join('\n  ')}`;
}
