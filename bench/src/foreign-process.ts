import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ProcessSample } from './child-process.js';

/** Clock ticks per second of /proc's CPU times (USER_HZ). */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/**
 * A process the bench did not write, sampled from outside: an anchor's server or SDK endpoint.
 * CPU comes from /proc/<pid>/stat (all its threads, in clock ticks), so any program can be
 * measured the way the bench's own children measure themselves. It sends nothing to Redis.
 */
export class ForeignProcess {
  constructor(
    readonly name: string,
    readonly pid: number,
    /** Whether the bench may stop it while other setups run: not a database's own backend. */
    readonly pausable: boolean,
  ) {}

  sample(): Promise<ProcessSample> {
    // Fields after the command name (which may hold spaces, so it is skipped by its closing paren):
    // state is field 3 of stat(5), utime 14 and stime 15.
    const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const micros = (ticks: string | undefined) => (Number(ticks) * 1_000_000) / TICKS_PER_SECOND;
    return Promise.resolve({ cpu: { user: micros(fields[11]), system: micros(fields[12]) }, redisSent: {}, redisBatches: 0 });
  }

  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    if (!this.pausable) return;
    try {
      process.kill(this.pid, signal);
    } catch {
      // Already gone: its setup's stop reports that.
    }
  }
}

/** The running program's name (/proc/<pid>/comm), to tell a database's backend from the anchor's own processes. */
export function commandOf(pid: number): string {
  return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
}
