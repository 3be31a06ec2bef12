// Replays a recorded history of ledger operations against the model's ledger (ledger-ops.pml, the same
// transitions SPIN checks in ledger.pml) and names the first step the ledger does not allow. Plain ESM,
// no build: `replayHistory(history)` writes a driver from history.pml.template and runs `spin` on it in
// simulation mode (one path: every ledger operation is deterministic).
//
// A history is `[{ key, op, owner, reply, answer?, unknown? }]`, in the order the operations took effect:
//   claim          reply claimed | stored | unknown | in_progress | orphaned | orphaned_staged
//                  (answer: the stored or staged answer the reply carried, checked when given)
//   stage          reply staged | taken                   answer: what was staged
//   settle         reply settled | refused                answer: what was stored; unknown: true for OUTCOME_UNKNOWN
//   renew          reply renewed | lost
//   give_back      reply given_back | refused
//   resolve        reply resolved | not_unknown | not_found   answer: the resolution stored (no owner)
//   mark_published reply marked                           (no owner)
//   expire         reply expired | refused                (a lease ran out; no owner)
// Owners and answers are opaque strings (owner tokens, serialized outcomes); equal strings are the same.
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MODEL_DIR = new URL('.', import.meta.url).pathname;
const templateText = await readFile(join(MODEL_DIR, 'history.pml.template'), 'utf8');

/** Each operation's replies, by the code the ledger answers with. */
const REPLIES = {
  claim: ['', 'claimed', 'stored', 'unknown', 'in_progress', 'orphaned', 'orphaned_staged'],
  stage: ['taken', 'staged'],
  settle: ['refused', 'settled'],
  renew: ['lost', 'renewed'],
  give_back: ['refused', 'given_back'],
  resolve: ['', 'resolved', 'not_unknown', 'not_found'],
  mark_published: ['', 'marked'],
  expire: ['refused', 'expired'],
};
const OWNED = new Set(['claim', 'stage', 'settle', 'renew', 'give_back']);
/** The code a step prints when the ledger's reply matched but carried another answer than the recorded one. */
const ANOTHER_ANSWER = 99;
/** Owner 1 is the operator's tag in the ledger; owners are numbered from 2. */
const FIRST_OWNER = 2;

/**
 * @typedef {{ key: string, op: keyof typeof REPLIES, owner?: string, reply: string, answer?: string, unknown?: boolean }} HistoryStep
 * @typedef {{ allowed: true, steps: number } | { allowed: false, step: number, op: string, recorded: string, ledger: string }} Replay
 */

/** Numbers each distinct string from `first`, in order of appearance. */
function numbering(first, limit, what) {
  const ids = new Map();
  return (name) => {
    if (!ids.has(name)) {
      if (ids.size + first > limit) throw new Error(`a history may name at most ${limit - first + 1} ${what}`);
      ids.set(name, ids.size + first);
    }
    return ids.get(name);
  };
}

/** Checks one recorded step's shape; throws naming the step when it is not one the ledger knows. */
function checkStep(step, index) {
  const replies = REPLIES[step?.op];
  if (replies === undefined) throw new Error(`step ${index}: unknown operation ${JSON.stringify(step?.op)}`);
  if (typeof step.key !== 'string' || step.key === '') throw new Error(`step ${index}: a key is required`);
  if (!replies.includes(step.reply) || step.reply === '') {
    throw new Error(`step ${index}: ${step.op} cannot reply ${JSON.stringify(step.reply)} (${replies.filter(Boolean).join(', ')})`);
  }
  if (OWNED.has(step.op) && (typeof step.owner !== 'string' || step.owner === ''))
    throw new Error(`step ${index}: ${step.op} needs an owner`);
  if ((step.op === 'stage' || step.op === 'settle' || step.op === 'resolve') && typeof step.answer !== 'string') {
    throw new Error(`step ${index}: ${step.op} needs the answer`);
  }
}

/** Promela for one step: the operation, then the comparison of the ledger's reply with the recorded one. */
function stepSource(step, index, ids) {
  const k = ids.key(step.key);
  const t = OWNED.has(step.op) ? ids.owner(step.owner) : 0;
  const a = step.answer === undefined ? 0 : ids.answer(step.answer);
  const code = REPLIES[step.op].indexOf(step.reply);
  const lines = [`  /* step ${index}: ${step.op} → ${step.reply} */`];
  switch (step.op) {
    case 'claim':
      if (step.reply === 'orphaned' || step.reply === 'orphaned_staged') lines.push(`  lease_ran_out(${k}, ${t});`);
      lines.push(`  ledger_claim(${k}, ${t}, out);`);
      if (a !== 0 && step.reply === 'orphaned_staged')
        lines.push(`  if :: out == ${code} && led[${k}].sv != ${a} -> out = ${ANOTHER_ANSWER} :: else -> skip fi;`);
      if (a !== 0 && (step.reply === 'stored' || step.reply === 'unknown'))
        lines.push(`  if :: out == ${code} && led[${k}].ov != ${a} -> out = ${ANOTHER_ANSWER} :: else -> skip fi;`);
      break;
    case 'stage':
      lines.push(`  ledger_stage(${k}, ${t}, ${a}, 0, out);`);
      break;
    case 'settle':
      lines.push(`  ledger_settle(${k}, ${t}, ${a}, 0, ${step.unknown === true ? 1 : 0}, out);`);
      break;
    case 'renew':
      lines.push(`  ledger_renew(${k}, ${t}, out);`);
      break;
    case 'give_back':
      lines.push(`  ledger_give_back(${k}, ${t}, out);`);
      break;
    case 'resolve':
      lines.push(`  ledger_resolve(${k}, ${a}, out, outv);`);
      lines.push(`  if :: out == ${code} && outv != ${a} -> out = ${ANOTHER_ANSWER} :: else -> skip fi;`);
      break;
    case 'mark_published':
      lines.push(`  ledger_mark_published(${k}); out = 1;`);
      break;
    case 'expire':
      lines.push(`  ledger_expire(${k}, out);`);
      break;
  }
  lines.push(`  expect(${index}, ${code});`);
  return lines.join('\n');
}

/**
 * The replay driver for `history`, as Promela: the template with its keys and steps filled in.
 * @param {readonly HistoryStep[]} history
 * @returns {string}
 */
function historyDriver(history) {
  if (!Array.isArray(history)) throw new Error('a history is an array of steps');
  history.forEach(checkStep);
  const ids = { key: numbering(0, 255, 'keys'), owner: numbering(FIRST_OWNER, 255, 'owners'), answer: numbering(1, 255, 'answers') };
  const steps = history.map((step, index) => stepSource(step, index, ids)).join('\n');
  const keys = new Set(history.map((step) => step.key)).size;
  return templateText
    .replace('/*KEYS*/', String(Math.max(1, keys)))
    .replace('/*STEPS*/', steps)
    .replace('/*COUNT*/', String(history.length));
}

function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/**
 * Replays `history` against the ledger; the first step it does not allow, or that all are allowed.
 * @param {readonly HistoryStep[]} history
 * @param {{ spin?: string }} [options] the spin binary (default `spin` on PATH)
 * @returns {Promise<Replay>}
 */
export async function replayHistory(history, { spin = 'spin' } = {}) {
  const source = historyDriver(history);
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-history-'));
  try {
    await copyFile(join(MODEL_DIR, 'ledger-ops.pml'), join(dir, 'ledger-ops.pml'));
    await writeFile(join(dir, 'history.pml'), source);
    const output = await run(spin, ['history.pml'], dir);
    const refused = /REFUSED (\d+) (\d+)/.exec(output);
    if (refused !== null) {
      const step = Number(refused[1]);
      const { op, reply } = history[step];
      const code = Number(refused[2]);
      const ledger = code === ANOTHER_ANSWER ? `${reply} with another answer` : (REPLIES[op][code] ?? `reply ${code}`);
      return { allowed: false, step, op, recorded: reply, ledger };
    }
    const allowed = /ALLOWED (\d+)/.exec(output);
    if (allowed === null) throw new Error(`spin gave no verdict on the history:\n${output}`);
    return { allowed: true, steps: Number(allowed[1]) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
