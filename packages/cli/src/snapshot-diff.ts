import type { RoleSnapshot, RoleSnapshotEntry } from '@gatehouse/contracts';

const FIELDS = ['effect', 'approval', 'retired'] as const;

type Entries = ReadonlyMap<string, Readonly<Record<string, unknown>>>;

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const shown = (value: unknown): string => (value === undefined ? '(none)' : JSON.stringify(value));

/** A pinned snapshot's roles, each a map of tool address → entry; undefined when the file has another shape. */
function pinnedRoles(pinned: unknown): ReadonlyMap<string, Entries> | undefined {
  if (!isRecord(pinned)) return undefined;
  const roles = new Map<string, Entries>();
  for (const [role, entries] of Object.entries(pinned)) {
    if (!Array.isArray(entries)) return undefined;
    const byTool = new Map<string, Readonly<Record<string, unknown>>>();
    for (const entry of entries as unknown[]) {
      if (!isRecord(entry) || typeof entry['tool'] !== 'string') return undefined;
      byTool.set(entry['tool'], entry);
    }
    roles.set(role, byTool);
  }
  return roles;
}

function entriesOf(entries: readonly RoleSnapshotEntry[]): Entries {
  return new Map(entries.map((entry) => [entry.tool, { ...entry }]));
}

/** The differences of one role's tools: added, removed, and each field that changed. */
function roleDifferences(role: string, pinned: Entries, current: Entries): string[] {
  const differences: string[] = [];
  for (const tool of pinned.keys())
    if (!current.has(tool)) differences.push(`role ${role}: ${tool} is pinned but the pack no longer grants it`);
  for (const [tool, entry] of current) {
    const was = pinned.get(tool);
    if (was === undefined) {
      differences.push(`role ${role}: ${tool} is granted but not pinned`);
      continue;
    }
    for (const field of FIELDS) {
      if (JSON.stringify(was[field]) !== JSON.stringify(entry[field]))
        differences.push(`role ${role}: ${tool} ${field} ${shown(was[field])} → ${shown(entry[field])}`);
    }
  }
  return differences;
}

/**
 * How the pack's per-role snapshot differs from a checked-in one (`catalog.snapshot.json`), one line
 * per difference naming the role, the tool and the field: what a reviewer reads before re-pinning.
 * Empty when they are the same. Equal content written differently is a difference too (the file is
 * compared as text by contract tests): regenerate it.
 */
export function snapshotDifferences(pinnedText: string, current: RoleSnapshot, currentText: string): string[] {
  let pinned: unknown;
  try {
    pinned = JSON.parse(pinnedText);
  } catch (error) {
    return [`the pinned snapshot is not JSON: ${error instanceof Error ? error.message : String(error)}`];
  }
  const roles = pinnedRoles(pinned);
  if (roles === undefined)
    return ['the pinned snapshot is not a per-role snapshot ({ "<role>": [{ "tool", "effect", "approval", "retired" }] })'];
  const differences: string[] = [];
  for (const role of roles.keys())
    if (current[role] === undefined) differences.push(`role ${role} is pinned but the pack has no such role`);
  for (const [role, entries] of Object.entries(current)) {
    const pinnedEntries = roles.get(role);
    if (pinnedEntries === undefined) differences.push(`role ${role} is in the pack but not pinned`);
    else differences.push(...roleDifferences(role, pinnedEntries, entriesOf(entries)));
  }
  if (differences.length === 0 && pinnedText !== currentText)
    differences.push('same roles and tools, written differently: regenerate the file with --snapshot');
  return differences;
}
