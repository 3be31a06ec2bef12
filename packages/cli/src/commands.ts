import type { CommandGroup } from './command.js';
import { approvals } from './commands/approvals.js';
import { catalog } from './commands/catalog.js';
import { dlq } from './commands/dlq.js';
import { keys } from './commands/keys.js';
import { operations } from './commands/operations.js';
import { pack } from './commands/pack.js';
import { runs } from './commands/runs.js';
import { trace } from './commands/trace.js';

/** Every top-level command, in the order help lists them. A command is one file in commands/. */
export const COMMAND_GROUPS: readonly CommandGroup[] = [runs, approvals, operations, dlq, catalog, trace, pack, keys];
