/**
 * An anchor: the engine a platform team would pick instead of Gatehouse, doing the same governed
 * call. Both calls take the bench tools' arguments (`{ seq, payload }`), validate them with Ajv
 * against the same JSON Schema, and are keyed by the request's `idempotency-key` header: a repeated
 * key answers the first call's result without running it again. The write runs one durable step.
 */
export interface RunningAnchor {
  readonly name: 'restate' | 'dbos';
  /** POST a JSON body `{ seq, payload }` with an `idempotency-key` header; answers `{ seq, ok: true }`. */
  readonly readUrl: string;
  readonly writeUrl: string;
  /** Every process the anchor runs (its server, its SDK's endpoint): the CPU they use is the anchor's cost. */
  readonly pids: readonly number[];
  stop(): Promise<void>;
}
