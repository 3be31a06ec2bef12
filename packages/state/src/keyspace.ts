/**
 * Every Redis key Gatehouse writes, under one prefix (GATEHOUSE_REDIS_PREFIX, default `gh:`) so that
 * deployments or tests sharing a server never see each other's state.
 *
 * On a Redis Cluster, every key one script, transaction or pipeline touches must hash to one slot.
 * Each such key carries a hash tag (`{…}`: the cluster hashes only what is between the first `{`
 * and the next `}`): a record and its index share the run id (`mcpTask`, `mcpTasksOfRun`), and all
 * slot sets on a cluster share `{slots}`. A prefix must therefore hold no `{` of its own.
 */
export class Keyspace {
  constructor(readonly prefix = 'gh:') {}

  run(runId: string): string {
    return `${this.prefix}run:{${runId}}`;
  }

  runsOfTenant(tenant: string): string {
    return `${this.prefix}runs:${tenant}`;
  }

  /**
   * The boundary's claim of a command_id. Command ids and tenants come from the runtime unchecked,
   * so the key holds their hash (`claimHash`), never the raw strings; it is tagged with its run's id
   * (`slotTag`), so the claim and the run record share a cluster slot and one script reads both.
   */
  commandClaim(slotTag: string, claimHash: string): string {
    return `${this.prefix}cmd:{${slotTag}}:${claimHash}`;
  }

  idempotency(key: string): string {
    return `${this.prefix}idem:{${key}}`;
  }

  rateWindow(tool: string, scope: string): string {
    return `${this.prefix}rate:${tool}:${scope}`;
  }

  /** A scope's concurrency slots on a single Redis server (the names every executor already uses). */
  slots(scope: string): string {
    return `${this.prefix}slots:${scope}`;
  }

  /**
   * A scope's concurrency slots on a Redis Cluster. A write takes its tenant's and its run's slots
   * in one script, so every scope's set carries the one tag `{slots}` (one hash slot). The sets stay
   * small: a member per write running now. Single servers keep the names above, so executors of
   * the previous release and of this one count the same slots during a rolling upgrade.
   */
  clusterSlots(scope: string): string {
    return `${this.prefix}slots:{slots}:${scope}`;
  }

  lock(resource: string): string {
    return `${this.prefix}lock:${resource}`;
  }

  approval(approvalId: string): string {
    return `${this.prefix}approval:{${approvalId}}`;
  }

  proposal(proposalId: string): string {
    return `${this.prefix}proposal:{${proposalId}}`;
  }

  /** A run's MCP bearer token, by the sha256 of the token (the token itself is never stored). */
  runToken(tokenSha256: string): string {
    return `${this.prefix}runtoken:${tokenSha256}`;
  }

  /** The access token of a run's person, sealed to the executors' keys, for token exchange (tagged by run, one cluster slot). */
  subjectToken(runId: string): string {
    return `${this.prefix}subject:{${runId}}`;
  }

  /** The refresh token an exchange for one run, audience and scope left, sealed (`grantHash` names the pair). */
  exchangeGrant(runId: string, grantHash: string): string {
    return `${this.prefix}xgrant:{${runId}}:${grantHash}`;
  }

  /** An approver's sign-in session, by the sha256 of its cookie (the cookie itself is never stored). */
  approverSession(idSha256: string): string {
    return `${this.prefix}approver-session:${idSha256}`;
  }

  /** A sign-in under way at the identity provider, by the sha256 of its `state`; taken once. */
  signIn(stateSha256: string): string {
    return `${this.prefix}sign-in:${stateSha256}`;
  }

  /** A task of the MCP front door, scoped to the run that created it. */
  mcpTask(runId: string, taskId: string): string {
    return `${this.prefix}mcptask:{${runId}}:${taskId}`;
  }

  /** Held by the front door instance that waits for a task's result, under a lease it renews. */
  mcpTaskWaiter(runId: string, taskId: string): string {
    return `${this.prefix}mcptask-waiter:{${runId}}:${taskId}`;
  }

  /** The tasks of a run, newest last (a sorted set scored by creation time). */
  mcpTasksOfRun(runId: string): string {
    return `${this.prefix}mcptasks:{${runId}}`;
  }
}
