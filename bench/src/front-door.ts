import { startMcpService } from '@gatehouse/mcp';
import type { RunningMcpService } from '@gatehouse/mcp';
import { Keyspace, RunRegistry, RunTokens } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { benchCatalog } from './bench-catalog.js';
import { parseSigningKey } from '@gatehouse/events';
import { BENCH_KEYS, benchResultKeys } from './bench-keys.js';
import type { ArmTopics, BenchRun } from './stack.js';
import { config, serviceLogger } from './stack.js';

/** Settings of arm (m)'s front door (the defaults of `gatehouse-mcp`; no call here waits for a person). */
export const MCP_SETTINGS = { waitMs: 30_000, progressMs: 1_000, taskTtlMs: 600_000 } as const;

/**
 * Starts the MCP front door in this process over an arm's topics and Redis prefix, on a free
 * loopback port (Streamable HTTP, stateless: a server per request, the run's token checked each time).
 */
export function startBenchFrontDoor(arm: ArmTopics, redis: Redis, redisPrefix: string): Promise<RunningMcpService> {
  return startMcpService({
    events: { ...config, topicPrefix: arm.prefix },
    redis,
    redisPrefix,
    catalog: benchCatalog().catalog,
    logger: serviceLogger,
    transport: { kind: 'http', host: '127.0.0.1', port: 0, signingKey: parseSigningKey(BENCH_KEYS.mcp.signingKey) },
    waitMs: MCP_SETTINGS.waitMs,
    progressMs: MCP_SETTINGS.progressMs,
    taskTtlMs: MCP_SETTINGS.taskTtlMs,
    clientId: `${arm.label}-mcp`,
    resultKeys: benchResultKeys(),
  });
}

/** Issues an MCP token for each run (as `POST /runs` with `"mcp_token": true` does): the bearer its client sends. */
export async function issueMcpTokens(redis: Redis, redisPrefix: string, runs: readonly BenchRun[]): Promise<string[]> {
  const keys = new Keyspace(redisPrefix);
  const registry = new RunRegistry(redis, keys);
  const tokens = new RunTokens(redis, keys, registry);
  const issued: string[] = [];
  for (const { runId } of runs) {
    const run = await registry.get(runId);
    if (run === undefined) throw new Error(`run ${runId} is not registered`);
    issued.push((await tokens.issue(run)).token);
  }
  return issued;
}
