// Keeps Gatehouse's services running for `npm start`: a service that dies is started again after
// a growing pause, and stop() takes them down in stages, callers before the systems they call.
import { launch, stopChild } from './services.mjs';

/** @typedef {import('node:child_process').ChildProcess} ChildProcess */
/**
 * One instance and its restart bookkeeping.
 * @typedef {{ name: string, child: ChildProcess | null, readyAt: number | null, streak: number, timer: NodeJS.Timeout | null }} Slot
 */

/** @param {number} ms */
const seconds = (ms) => `${(ms / 1000).toFixed(1)}s`;

/**
 * @param {{
 *   names: string[], env: Record<string,string>, logsDir?: string, say?: (line: string) => void, timeoutMs?: number,
 *   firstDelayMs?: number, maxDelayMs?: number, stableMs?: number, graceMs?: number,
 * }} options
 */
export function createSupervisor({
  names,
  env,
  logsDir,
  say = () => {},
  timeoutMs,
  firstDelayMs = 500,
  maxDelayMs = 30_000,
  stableMs = 60_000,
  graceMs = 20_000,
}) {
  /** @type {Slot[]} */
  const slots = names.map((name) => ({ name, child: null, readyAt: null, streak: 0, timer: null }));
  let stopping = false;

  /**
   * Launches a slot's service; on an unexpected exit, schedules the next launch.
   * @param {Slot} slot
   * @param {boolean} first the start-up launch: failing to get ready is fatal, not retried
   * @returns {Promise<void>}
   */
  const run = (slot, first) => {
    const { child, ready } = launch(slot.name, { env, logsDir, say, timeoutMs, detached: true });
    slot.child = child;
    slot.readyAt = null;
    child.once('exit', (code, signal) => {
      // A first launch that never got ready is a start-up failure: start() reports it.
      if (stopping || (first && slot.readyAt === null)) return;
      const stable = slot.readyAt !== null && Date.now() - slot.readyAt >= stableMs;
      slot.streak = stable ? 1 : slot.streak + 1;
      const delay = Math.min(firstDelayMs * 2 ** (slot.streak - 1), maxDelayMs);
      say(`${slot.name} exited (${code !== null ? `code ${code}` : signal}); restarting in ${seconds(delay)} (restart ${slot.streak})`);
      slot.timer = setTimeout(() => {
        slot.timer = null;
        if (!stopping) run(slot, false).catch(() => {});
      }, delay);
    });
    return ready.then(
      () => void (slot.readyAt = Date.now()),
      (error) => {
        if (first || stopping) throw error;
        if (child.signalCode !== null) return; // killed before it was ready: the exit handler restarts it
        if (child.exitCode !== null) {
          // It failed before it was ready: the exit handler restarts it; its last lines say why.
          const tail = error.message.split('\n').slice(1).join('\n');
          return void (tail === '' || say(tail));
        }
        say(`${slot.name} not ready within ${seconds(timeoutMs ?? 90_000)}; killing it`);
        child.kill('SIGKILL');
      },
    );
  };

  return {
    /** Starts every service; if one fails to get ready, stops them all and rejects. */
    async start() {
      try {
        await Promise.all(slots.map((slot) => run(slot, true)));
      } catch (error) {
        if (stopping) throw error; // stop() is already taking them down
        stopping = true;
        await Promise.all(slots.map((slot) => (clearTimeout(slot.timer ?? undefined), stopChild(slot.child, graceMs))));
        throw error;
      }
    },

    /**
     * Stops the services stage by stage, each stage in parallel (SIGTERM, SIGKILL after graceMs).
     * @param {{ names: string[], label: string }[]} stages services not named in any stage go first
     */
    async stop(stages) {
      stopping = true;
      for (const slot of slots) clearTimeout(slot.timer ?? undefined);
      const named = new Set(stages.flatMap((stage) => stage.names));
      const rest = slots.filter((slot) => !named.has(slot.name)).map((slot) => slot.name);
      const all = rest.length === 0 ? stages : [{ names: rest, label: 'the rest' }, ...stages];
      for (const stage of all) {
        say(`stopping ${stage.label}: ${stage.names.join(', ')}`);
        await Promise.all(
          slots
            .filter((slot) => stage.names.includes(slot.name))
            .map(async (slot) => {
              if (await stopChild(slot.child, graceMs)) say(`${slot.name} did not stop within ${seconds(graceMs)}; killed`);
            }),
        );
      }
    },

    /** Kills every service now (SIGKILL), for a second Ctrl-C. */
    kill() {
      stopping = true;
      for (const slot of slots) {
        clearTimeout(slot.timer ?? undefined);
        if (slot.child?.exitCode === null && slot.child.signalCode === null) slot.child.kill('SIGKILL');
      }
    },
  };
}
