/** A generated case before it gets its final, unique name. */
export interface Draft {
  /** What was done, e.g. `pattern ^[A-Z]{2}$ broken`. */
  readonly label: string;
  /** JSON pointer of the location the case is about ('' for the root). */
  readonly field: string;
  /** The union branch the case was built in, e.g. `/destination kind=new`, if any. */
  readonly context: string | undefined;
}

function displayPointer(pointer: string): string {
  return pointer === '' ? '(root)' : pointer;
}

/**
 * `<field>: <label>`, with the union branch appended only where two cases would otherwise share
 * a name, and a counter as the last resort. Order-preserving, so names are deterministic.
 */
export function uniqueNames(drafts: readonly Draft[]): string[] {
  const base = drafts.map((d) => `${displayPointer(d.field)}: ${d.label}`);
  const counts = countOf(base);
  const withContext = drafts.map((d, i) => {
    const name = base[i] ?? '';
    return (counts.get(name) ?? 0) > 1 && d.context !== undefined ? `${name} (${d.context})` : name;
  });
  const finalCounts = countOf(withContext);
  const seen = new Map<string, number>();
  return withContext.map((name) => {
    if ((finalCounts.get(name) ?? 0) <= 1) return name;
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return `${name} #${n}`;
  });
}

function countOf(names: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}
