// A test-only read tool, `echo_note`, for tests of which pack an executor runs a call with (rolling
// upgrades, a pack changed under a published version), and a Gatehouse whose policy hosts it.
import { Catalog } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import { parseRoles, PolicyTable } from '@gatehouse/governance';
import { startGatehouse } from './gatehouse.js';
import type { Gatehouse } from './gatehouse.js';

/** Everything of echo_note's contract but its version and output schema, which each test gives. */
export const ECHO_NOTE = {
  name: 'echo_note',
  description: 'Test-only read: returns the note it is given.',
  input: { type: 'object', additionalProperties: false, required: ['note'], properties: { note: { type: 'string', maxLength: 50 } } },
  effect: 'read',
  retry: 'safe',
  timeoutMs: 2_000,
  cancel: 'none',
  maxResultBytes: 1_024,
} as const;

/** echo_note.v1 as the tests of a published version hold it: the note back, nothing else. */
export const ECHO_NOTE_V1 = {
  ...ECHO_NOTE,
  version: 1,
  output: { type: 'object', additionalProperties: false, required: ['note'], properties: { note: { type: 'string' } } },
} as const;

/**
 * A Gatehouse with no executor whose policy service and approval-free role `note-reader` host
 * `pack` (every tool of it callable, writes denied); start executors with `g.startExecutor`.
 */
export function startNoteGatehouse(label: string, pack: readonly ToolImplementation[]): Promise<Gatehouse> {
  const catalog = Catalog.load(pack.map((tool) => tool.contract));
  const tools = catalog.tools().map((tool) => tool.address);
  const roles = parseRoles({ roles: { 'note-reader': { description: 'Reads notes.', readOnly: true, tools } } }, catalog);
  const table = PolicyTable.parse(
    {
      rules: [{ id: 'no-writes', description: 'Test only.', match: { effect: 'write' }, decision: { kind: 'deny', reason: 'none here' } }],
    },
    catalog.tools(),
  );
  return startGatehouse(label, { executors: 0, catalog, implementations: [...pack], roles, table });
}
