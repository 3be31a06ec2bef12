// The types of history.mjs (plain JavaScript, loaded by path by the tests that replay histories).

/** One recorded ledger operation, as the replay takes it: see history.mjs for the replies of each. */
export interface HistoryStep {
  readonly key: string;
  readonly op: 'claim' | 'stage' | 'settle' | 'renew' | 'give_back' | 'resolve' | 'mark_published' | 'expire';
  readonly owner?: string;
  readonly reply: string;
  readonly answer?: string;
  readonly unknown?: boolean;
}

/** Every step allowed, or the first the ledger does not allow: what was recorded and what the ledger answers. */
export type Replay =
  | { readonly allowed: true; readonly steps: number }
  | { readonly allowed: false; readonly step: number; readonly op: string; readonly recorded: string; readonly ledger: string };

export function replayHistory(history: readonly HistoryStep[], options?: { readonly spin?: string }): Promise<Replay>;
