import { existsSync } from 'node:fs';

/** Where Debian's faketime package puts libfaketime (npm test installs it: scripts/prerequisites.mjs). */
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

/** What runs a process with its clock `seconds` off (libfaketime, Debian's faketime package). */
export function clockOff(seconds: number): Record<string, string> {
  if (!existsSync(LIBFAKETIME))
    throw new Error(`libfaketime is not at ${LIBFAKETIME}: apt-get install faketime (npm test installs it as root)`);
  return { LD_PRELOAD: LIBFAKETIME, FAKETIME: `${seconds > 0 ? '+' : ''}${seconds}s` };
}
