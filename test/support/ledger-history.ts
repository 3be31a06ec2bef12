import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LedgerStep } from '@gatehouse/state';
import { replayHistory } from '../../packages/state/model/history.mjs';
import type { HistoryStep } from '../../packages/state/model/history.mjs';

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;

/** A ledger step as a process recorded it (GATEHOUSE_LEDGER_HISTORY): the step, and which process took it. */
export interface RecordedStep extends LedgerStep {
  readonly process: string;
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
  readonly steps: RecordedStep[];
  /**
   * Set when a process noted an attempt on the entry whose step it never recorded (it was killed
   * while the script ran or its reply was on the way): that step may have happened, so only the steps
   * up to this version (the last its owner did record there) can be replayed.
   */
  cutAfter?: number;
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
  /** Attempts still waiting for their step, by process, entry, operation and owner. */
  const pending = new Map<string, number>();
  const tag = (s: RecordedStep): string => JSON.stringify([s.process, s.entry, s.op, s.owner]);
  for (const step of lines) {
    if (step.reply === 'attempted') {
      pending.set(tag(step), (pending.get(tag(step)) ?? 0) + 1);
      continue;
    }
    const waiting = pending.get(tag(step)) ?? 0;
    if (waiting > 0) pending.set(tag(step), waiting - 1);
    const entry = entries.get(step.entry) ?? { steps: [] };
    entry.steps.push(step);
    entries.set(step.entry, entry);
  }
  for (const [key, count] of pending) {
    if (count === 0) continue;
    const [, name, , owner] = JSON.parse(key) as [string, string, string, string];
    const entry = entries.get(name) ?? { steps: [] };
    entries.set(name, entry);
    // Owners are per delivery: what the killed delivery recorded on the entry is known; after that, nothing is.
    const last = Math.max(-1, ...entry.steps.filter((s) => s.owner === owner).map((s) => s.version));
    entry.cutAfter = Math.min(entry.cutAfter ?? Infinity, last);
  }
  for (const { steps } of entries.values()) {
    const recorded = new Map(steps.map((step, i) => [step, i]));
    steps.sort(
      (a, b) => a.version - b.version || Number(changed(b)) - Number(changed(a)) || (recorded.get(a) ?? 0) - (recorded.get(b) ?? 0),
    );
  }
  return entries;
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
  /** Entries checked only up to a step a killed process took but never recorded (see RecordedEntry.cutAfter). */
  readonly cut: number;
  /** The first step the model does not allow, with its entry's steps up to it; undefined when every step is allowed. */
  readonly refused?: { readonly entry: string; readonly ledger: string; readonly steps: readonly string[] };
}

/** The keys, owners and answers one replay may name (the model numbers each in a byte). */
const REPLAY_LIMIT = 200;

/**
 * Replays every entry of a recorded history against the model's ledger (SPIN, in simulation, on
 * the same transitions the model checker explores): each recorded reply must be the one the model
 * gives to that operation in that state. Entries are independent, so they are replayed side by
 * side, as many at once as one replay can name.
 */
export async function checkLedgerHistory(path: string): Promise<HistoryCheck> {
  const entries = entriesOf(path);
  let steps = 0;
  let skipped = 0;
  let cut = 0;
  let batch: { entry: string; recorded: RecordedStep[]; model: HistoryStep[] }[] = [];
  const names = { owners: new Set<string>(), answers: new Set<string>() };
  const replay = async (): Promise<HistoryCheck['refused']> => {
    const history = batch.flatMap((e) => e.model);
    const found = history.length === 0 ? ({ allowed: true, steps: 0 } as const) : await replayHistory(history);
    const current = batch;
    batch = [];
    names.owners.clear();
    names.answers.clear();
    if (found.allowed) return undefined;
    const refused = history[found.step];
    const entry = current.find((e) => e.model.includes(refused as HistoryStep));
    const upTo = entry === undefined ? [] : entry.model.slice(0, entry.model.indexOf(refused as HistoryStep) + 1);
    return {
      entry: entry?.entry ?? '?',
      ledger: `recorded ${found.op} → ${found.recorded}, the model answers ${found.ledger}`,
      steps: upTo.map((s, i) => {
        const r = entry?.recorded.filter((x) => modelStep(x) !== undefined)[i];
        return `${s.op} ${s.owner ?? ''} → ${s.reply}${r === undefined ? '' : ` (${r.process}, v${r.version})`}`;
      }),
    };
  };
  for (const [entry, { steps: all, cutAfter }] of entries) {
    const recorded = cutAfter === undefined ? all : all.filter((s) => s.version <= cutAfter);
    if (cutAfter !== undefined) cut += 1;
    const model = recorded.map(modelStep).filter((s): s is HistoryStep => s !== undefined);
    skipped += recorded.length - model.length;
    steps += model.length;
    for (const s of model) {
      if (s.owner !== undefined) names.owners.add(s.owner);
      if (s.answer !== undefined) names.answers.add(s.answer);
    }
    batch.push({ entry, recorded, model });
    if (batch.length >= REPLAY_LIMIT / 2 || names.owners.size >= REPLAY_LIMIT || names.answers.size >= REPLAY_LIMIT) {
      const refused = await replay();
      if (refused !== undefined) return { entries: entries.size, steps, skipped, cut, refused };
    }
  }
  const refused = await replay();
  return refused === undefined ? { entries: entries.size, steps, skipped, cut } : { entries: entries.size, steps, skipped, cut, refused };
}

/** One line for a test's log: how much of the history was replayed, and the first step refused. */
export function historyLine(name: string, check: HistoryCheck): string {
  const head = `${name}: ledger history: ${check.entries} entries, ${check.steps} steps replayed against the model, ${check.skipped} without a counterpart, ${check.cut} checked up to a step a killed process never recorded`;
  if (check.refused === undefined) return `${head}; every step allowed`;
  return `${head}; REFUSED at ${check.refused.entry}: ${check.refused.ledger}\n  ${check.refused.steps.join('\n  ')}`;
}
