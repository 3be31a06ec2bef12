/**
 * Every Redis key Gatehouse writes, under one prefix (GATEHOUSE_REDIS_PREFIX, default `gh:`) so that
 * deployments or tests sharing a server never see each other's state. Hash tags keep the keys a
 * Lua script touches together in one cluster slot.
 */
export class Keyspace {
  constructor(readonly prefix = 'gh:') {}

  run(runId: string): string {
    return `${this.prefix}run:{${runId}}`;
  }

  runsOfTenant(tenant: string): string {
    return `${this.prefix}runs:${tenant}`;
  }

  idempotency(key: string): string {
    return `${this.prefix}idem:{${key}}`;
  }

  rateWindow(tool: string, scope: string): string {
    return `${this.prefix}rate:${tool}:${scope}`;
  }

  slots(scope: string): string {
    return `${this.prefix}slots:${scope}`;
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

  /** A task of the MCP front door, scoped to the run that created it. */
  mcpTask(runId: string, taskId: string): string {
    return `${this.prefix}mcptask:{${runId}}:${taskId}`;
  }

  /** The tasks of a run, newest last (a sorted set scored by creation time). */
  mcpTasksOfRun(runId: string): string {
    return `${this.prefix}mcptasks:{${runId}}`;
  }
}
