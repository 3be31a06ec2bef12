import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replayHistory } from '../model/history.mjs';
import type { HistoryStep } from '../model/history.mjs';

// The claim ledger's model (packages/state/model/ledger.pml), checked exhaustively by SPIN: each variant is
// generated with its switches (spin -a -D…), compiled (gcc) and run (pan, safety only, no bitstate).
// model/README.md says what each switch means and what each result says about the code.

const MODEL_DIR = new URL('../model/', import.meta.url).pathname;
/** A search deeper than this is cut short, and then proves nothing: every variant stays far below it. */
const MAX_DEPTH = 20_000;
const MEMORY_MB = 2048;

/** The fixes model/README.md found and the code now has; without one of them the model breaks an invariant. */
const FIXES = ['-DFIX_FENCE_CMD', '-DFIX_STAGE_ORDER', '-DFIX_REOPEN', '-DFIX_DURABLE_UNKNOWN'];
/** The invariants only the fixed ledger keeps (the others are always checked). */
const CHECKS = ['-DCHECK_TRUTH', '-DCHECK_RETRY', '-DCHECK_PROPOSAL', '-DCHECK_RESOLVABLE'];
const fixesBut = (fix: string): string[] => FIXES.filter((flag) => flag !== fix);
/** Design (b): answers in Kafka transactions, exactly one visible answer required; the write path's other choices are checked above. */
const DESIGN_B = [...FIXES, '-DEXACTLY_ONE', '-DTXN', '-DFAILOVERS=0', '-DEXPIRIES=0', '-DLEAN_SOR'];

interface Verdict {
  readonly output: string;
  readonly errors: number;
  readonly states: number;
  readonly depth: number;
  /** The counterexample replayed (spin -t), as the steps the model prints. */
  readonly story: string;
}

function run(command: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      // pan exits non-zero when it found an error: its report is what counts.
      if (error && !command.endsWith('pan')) reject(new Error(`${command} ${args.join(' ')}: ${stderr || error.message}`));
      else resolve(stdout + stderr);
    });
  });
}

// Two verifiers at a time: each is one process, and the machine has other tests to run.
const LIMIT = Math.max(1, Math.min(2, availableParallelism()));
let running = 0;
const waiting: (() => void)[] = [];
async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  while (running >= LIMIT) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  try {
    return await work();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

/** The replayed trail without the final dump of every variable: what each actor did, in order. */
function storyOf(trail: string): string {
  const lines = trail.split('\n');
  const end = lines.findIndex((line) => line.startsWith('spin: trail ends'));
  return lines
    .slice(0, end < 0 ? undefined : end + 1)
    .filter((line) => line.trim() !== '')
    .map((line) => line.trimEnd())
    .join('\n');
}

const numberIn = (output: string, pattern: RegExp): number => Number(pattern.exec(output)?.[1] ?? NaN);

/** Generates, compiles and runs the verifier of the model with `flags`, in a directory of its own. */
function verify(flags: readonly string[]): Promise<Verdict> {
  return inTurn(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ledger-model-'));
    try {
      for (const file of readdirSync(MODEL_DIR).filter((name) => name.endsWith('.pml')))
        copyFileSync(join(MODEL_DIR, file), join(dir, file));
      await run('spin', ['-a', ...flags, 'ledger.pml'], dir);
      // -O0: this pan.c takes ten times longer to compile at -O2 than the search takes to run at -O0.
      await run('gcc', ['-O0', '-DSAFETY', `-DMEMLIM=${MEMORY_MB}`, '-o', 'pan', 'pan.c'], dir);
      const output = await run(join(dir, 'pan'), [`-m${MAX_DEPTH}`, '-w22'], dir);
      const errors = numberIn(output, /errors: (\d+)/);
      const story = errors > 0 ? storyOf(await run('spin', ['-t', ...flags, 'ledger.pml'], dir)) : '';
      return {
        output,
        errors,
        states: numberIn(output, /(\d+) states, stored/),
        depth: numberIn(output, /depth reached (\d+)/),
        story,
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** Every reachable state was visited and no invariant broke. */
async function expectHolds(flags: readonly string[]): Promise<void> {
  const verdict = await verify(flags);
  expect(verdict.errors, `a counterexample was found:\n${verdict.story}\n\n${verdict.output}`).toBe(0);
  expect(verdict.output, 'the search was not exhaustive').not.toMatch(/Search not completed|max search depth too small|-DMEMLIM bound/);
  expect(verdict.depth, verdict.output).toBeLessThan(MAX_DEPTH);
  expect(verdict.states, verdict.output).toBeGreaterThan(1_000);
}

/** The checker finds a counterexample breaking `invariant`, and its trail replays to that assertion. */
async function expectBroken(flags: readonly string[], invariant: string): Promise<void> {
  const verdict = await verify(flags);
  expect(verdict.errors, `no counterexample was found:\n${verdict.output}`).toBeGreaterThan(0);
  expect(verdict.output, `another invariant broke first:\n${verdict.story}`).toContain(`assertion violated  !(${invariant})`);
  expect(verdict.story, 'the trail does not replay to the same assertion').toContain(`text of failed assertion: assert(!(${invariant}))`);
}

const EXHAUSTIVE_MS = 180_000;
const COUNTEREXAMPLE_MS = 120_000;

describe('the claim ledger and write path, as the code has them today', () => {
  it.concurrent(
    'keeps every invariant through crashes, a stalled executor and a copy of the order',
    () => expectHolds([...FIXES, ...CHECKS, '-DFAILOVERS=0']),
    EXHAUSTIVE_MS,
  );

  it.concurrent(
    'keeps every invariant through a Redis failover under the WAIT barrier',
    () => expectHolds([...FIXES, ...CHECKS, '-DREPLAYS=0']),
    EXHAUSTIVE_MS,
  );

  it.concurrent(
    'never applies a write twice even when the system of record neither honours the key nor checks the target version',
    () => expectHolds([...FIXES, '-DPLAIN_SOR', '-DFAILOVERS=0']),
    EXHAUSTIVE_MS,
  );

  it.concurrent(
    'never applies a write twice through a Redis failover even when the system of record neither honours the key nor checks the version',
    () => expectHolds([...FIXES, '-DPLAIN_SOR', '-DREPLAYS=0']),
    EXHAUSTIVE_MS,
  );

  it.concurrent(
    'answers every command once per decision when a policy worker refused at staging goes back to the claim',
    () => expectHolds(['-DPOLICY_MODEL', '-DTWO_POLICIES', '-DFIX_STAGED_BY_ANOTHER']),
    EXHAUSTIVE_MS,
  );

  it.concurrent(
    'publishes an answer twice when its owner dies between publishing and settling and the next owner repeats the staged answer',
    () => expectBroken([...FIXES, ...CHECKS, '-DEXACTLY_ONE', '-DEXPIRIES=0'], 'broken_one_answer'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'publishes the policy service’s staged refusal again after the worker that published it died',
    () => expectBroken(['-DPOLICY_MODEL', '-DTWO_POLICIES', '-DFIX_STAGED_BY_ANOTHER', '-DEXACTLY_ONE'], 'broken_one_answer'),
    COUNTEREXAMPLE_MS,
  );
});

describe('the checker’s teeth: each safeguard removed gives a counterexample', () => {
  it.concurrent(
    'without the WAIT barrier a failover takes back a staged answer and the command is answered again, differently',
    () => expectBroken([...FIXES, ...CHECKS, '-DNO_WAIT', '-DREPLAYS=0', '-DEXPIRIES=0'], 'broken_same_answer'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'without the renewal before the send a stalled executor writes after the new owner answered',
    () => expectBroken([...FIXES, ...CHECKS, '-DNO_FENCE', '-DFAILOVERS=0', '-DEXPIRIES=0'], 'broken_refusal_means_not_applied'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'without staging the next owner derives a second, different answer',
    () => expectBroken([...FIXES, ...CHECKS, '-DNO_STAGE', '-DFAILOVERS=0', '-DEXPIRIES=0'], 'broken_same_answer'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'if the fence renewed only the key, a stalled executor whose command was taken over would send the write after the command was answered as not applied',
    () => expectBroken([...fixesBut('-DFIX_FENCE_CMD'), '-DCHECK_TRUTH', '-DFAILOVERS=0'], 'broken_refusal_means_not_applied'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'if the key were staged beside the command, a stalled executor would stage on a key given back since, and a retry of a retryable answer would get a stale answer',
    () => expectBroken([...fixesBut('-DFIX_STAGE_ORDER'), '-DCHECK_RETRY', '-DFAILOVERS=0'], 'broken_retry_can_succeed'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'if any delivery could reopen the proposal, a stalled executor would reopen the one the key’s new owner consumed and writes with',
    () => expectBroken([...fixesBut('-DFIX_REOPEN'), '-DCHECK_PROPOSAL', '-DFAILOVERS=0'], 'broken_effect_with_proposal_open'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'if an OUTCOME_UNKNOWN were settled without WAIT, a failover would lose it, leaving the operator nothing to resolve',
    () => expectBroken([...fixesBut('-DFIX_DURABLE_UNKNOWN'), '-DCHECK_RESOLVABLE', '-DREPLAYS=0'], 'broken_unknown_resolvable'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'if a policy worker refused at staging ended its delivery, a command whose stager then died would go unanswered',
    () => expectBroken(['-DPOLICY_MODEL', '-DTWO_POLICIES'], 'broken_answered'),
    COUNTEREXAMPLE_MS,
  );
});

describe('design (b): answers in Kafka transactions with the consumed offset, read_committed', () => {
  it.concurrent(
    'alone publishes twice: an owner commits and dies before settling, a copy of the order repeats the staged answer',
    () => expectBroken(DESIGN_B, 'broken_one_answer'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'with the claim renewed before committing still publishes twice after a crash between commit and settle',
    () => expectBroken([...DESIGN_B, '-DR_RENEW'], 'broken_one_answer'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'with a transactional id per command still publishes twice after a crash between commit and settle',
    () => expectBroken([...DESIGN_B, '-DR_TXNID'], 'broken_one_answer'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'with a scan of the results before repeating still publishes twice when a stalled owner commits after the scan',
    () => expectBroken([...DESIGN_B, '-DR_SCAN'], 'broken_one_answer'),
    COUNTEREXAMPLE_MS,
  );

  it.concurrent(
    'with the scan and the renewal inside a transaction shorter than the lease gives exactly one answer',
    () => expectHolds([...DESIGN_B, '-DR_SCAN', '-DR_RENEW']),
    EXHAUSTIVE_MS,
  );

  it.concurrent(
    'with the scan and the renewal inside, the offset committed after the transaction and no transaction timeout to rely on: exactly one answer',
    () => expectHolds([...DESIGN_B, '-DR_SCAN', '-DR_RENEW', '-DOFFSETS_APART', '-DNO_TXN_TIMEOUT']),
    EXHAUSTIVE_MS,
  );

  // The renewal of an executor whose claim Redis lost makes the claim again with the answer staged.
  // No lapse: with one, the search outgrows the memory this test gives it (10 M states, incomplete).
  it.concurrent(
    'with the scan and the renewal inside, a claim a failover lost (no barrier) made again at the renewal: exactly one answer',
    () =>
      expectHolds([
        ...DESIGN_B.filter((flag) => flag !== '-DFAILOVERS=0'),
        '-DR_SCAN',
        '-DR_RENEW',
        '-DNO_WAIT',
        '-DREPLAYS=0',
        '-DLAPSES=0',
      ]),
    EXHAUSTIVE_MS,
  );

  it.concurrent(
    'with the scan and a transactional id per command gives exactly one answer',
    () => expectHolds([...DESIGN_B, '-DR_SCAN', '-DR_TXNID']),
    EXHAUSTIVE_MS,
  );
});

describe('replaying a recorded history against the ledger', () => {
  const answer = '{"status":"ok","result":{"refund_id":"rf_1"}}';
  // An owner stages its answer and stalls; the next owner takes the command over with that answer and settles it.
  const takeover: HistoryStep[] = [
    { key: 'cmd:run_1:c1', op: 'claim', owner: 'ex-a/1', reply: 'claimed' },
    { key: 'cmd:run_1:c1', op: 'stage', owner: 'ex-a/1', reply: 'staged', answer },
    { key: 'cmd:run_1:c1', op: 'claim', owner: 'ex-b/2', reply: 'in_progress' },
    { key: 'cmd:run_1:c1', op: 'claim', owner: 'ex-b/2', reply: 'orphaned_staged', answer },
    { key: 'cmd:run_1:c1', op: 'stage', owner: 'ex-a/1', reply: 'taken', answer },
    { key: 'cmd:run_1:c1', op: 'settle', owner: 'ex-b/2', reply: 'settled', answer },
    { key: 'cmd:run_1:c1', op: 'claim', owner: 'ex-a/3', reply: 'stored', answer },
  ];

  it('allows a history the ledger can produce', async () => {
    await expect(replayHistory(takeover)).resolves.toEqual({ allowed: true, steps: takeover.length });
  });

  it('refuses the first step the ledger does not allow: a stalled owner settling a command taken over', async () => {
    const history: HistoryStep[] = [
      ...takeover.slice(0, 5),
      { key: 'cmd:run_1:c1', op: 'settle', owner: 'ex-a/1', reply: 'settled', answer },
      ...takeover.slice(5),
    ];
    await expect(replayHistory(history)).resolves.toEqual({
      allowed: false,
      step: 5,
      op: 'settle',
      recorded: 'settled',
      ledger: 'refused',
    });
  });
});
