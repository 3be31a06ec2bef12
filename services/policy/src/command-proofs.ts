import type { KeyObject } from 'node:crypto';
import { COMMAND_PROVER_HEADER, runPublicKey, verifyCommandProof } from '@gatehouse/events';
import type { CommandProofRefusal, SignedHeaders, ToolCommand, TrustedKeys } from '@gatehouse/events';
import type { Run } from '@gatehouse/state';

/** What the policy service makes of a command's proof, before it stores anything for it. */
export type ProofOutcome =
  | { readonly kind: 'proven' }
  /** Proved by no front door, for a run that does not exist: nothing to prove it against, nothing to speak for. */
  | { readonly kind: 'no_run' }
  | { readonly kind: 'refused'; readonly reason: CommandProofRefusal; readonly detail: string };

// A run's key never changes while the run lives, so it is read once per run and kept; this bounds
// how many are kept (the oldest go first).
const MAX_KEPT = 10_000;

/**
 * Checks that a command was sent by whoever may speak for its run: the holder of the run's own key
 * (its public half is in the run record) or an MCP front door (GATEHOUSE_MCP_KEYS). A front door's
 * proof is checked without reading anything; a run's own needs its key, read from the run record
 * once per run.
 */
export class CommandProofs {
  private readonly kept = new Map<string, KeyObject | null>();

  constructor(
    private readonly runs: { get(runId: string): Promise<Run | undefined> },
    private readonly frontDoors: TrustedKeys,
  ) {}

  async check(command: ToolCommand, headers: SignedHeaders | undefined): Promise<ProofOutcome> {
    const byFrontDoor = headers !== undefined && Object.hasOwn(headers, COMMAND_PROVER_HEADER);
    const runKey = byFrontDoor ? undefined : await this.keyOf(command.run_id);
    if (runKey === 'no_run') return { kind: 'no_run' };
    const check = verifyCommandProof(command, headers, runKey ?? undefined, this.frontDoors);
    return check.ok ? { kind: 'proven' } : { kind: 'refused', reason: check.reason, detail: check.detail };
  }

  private async keyOf(runId: string): Promise<KeyObject | null | 'no_run'> {
    const kept = this.kept.get(runId);
    if (kept !== undefined) return kept;
    const run = await this.runs.get(runId);
    // An absent run is not kept: it may be registered a moment later.
    if (run === undefined) return 'no_run';
    const key = runPublicKey(run.proof_key) ?? null;
    if (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value as string);
    this.kept.set(runId, key);
    return key;
  }
}
