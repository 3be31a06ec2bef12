import type { Catalog } from '@gatehouse/contracts';
import { isAccepted } from './replay-types.js';
import type { ReplayCall, ReplayInvariant } from './replay-types.js';
import type { Trace } from './trace-format.js';

const listed = (items: readonly string[], none: string): string => (items.length === 0 ? none : items.join(', '));

/**
 * What must survive a schema change whatever the wording: every write keeps an approval rule, no
 * read becomes a write, no write loses or swaps its rule, nothing the run was allowed is refused
 * and nothing it was refused is allowed.
 */
export function checkInvariants(trace: Trace, catalog: Catalog, calls: readonly ReplayCall[]): ReplayInvariant[] {
  const ruleless = catalog
    .tools()
    .filter((t) => t.effect === 'write' && (t.approval ?? '') === '')
    .map((t) => t.address);
  const recorded = trace.catalog.tools.flatMap((t) => {
    const now = catalog.get(t.address);
    return now === undefined ? [] : [{ t, now }];
  });
  const readsTurned = recorded.filter(({ t, now }) => t.effect === 'read' && now.effect !== 'read').map(({ t }) => t.address);
  const rulesMoved = recorded
    .filter(({ t, now }) => t.effect === 'write' && (now.effect !== 'write' || (now.approval ?? null) !== t.approval))
    .map(
      ({ t, now }) => `${t.address} (${t.approval ?? 'none'} → ${now.effect === 'write' ? (now.approval ?? 'none') : 'no longer a write'})`,
    );
  const decided = calls.filter((c) => c.before.status !== 'undecided');
  const lost = decided.filter((c) => isAccepted(c.before.status) && !isAccepted(c.after.status)).map((c) => `${c.command_id} ${c.tool}`);
  const gained = decided.filter((c) => !isAccepted(c.before.status) && isAccepted(c.after.status)).map((c) => `${c.command_id} ${c.tool}`);
  return [
    { name: 'writes-have-approval-rules', holds: ruleless.length === 0, detail: listed(ruleless, 'every write declares an approval rule') },
    { name: 'reads-stay-reads', holds: readsTurned.length === 0, detail: listed(readsTurned, 'no recorded read became a write') },
    {
      name: 'writes-keep-approval-rules',
      holds: rulesMoved.length === 0,
      detail: listed(rulesMoved, 'every recorded write keeps its approval rule'),
    },
    {
      name: 'allowed-calls-stay-allowed',
      holds: lost.length === 0,
      detail: listed(lost, 'every call accepted when recorded is still accepted'),
    },
    {
      name: 'refused-calls-stay-refused',
      holds: gained.length === 0,
      detail: listed(gained, 'every call refused when recorded is still refused'),
    },
  ];
}
