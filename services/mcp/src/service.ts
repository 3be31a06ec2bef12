import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { createClient } from '@gatehouse/client';
import type { Catalog } from '@gatehouse/contracts';
import { frontDoorProof, publishContracts, topicNames } from '@gatehouse/events';
import type { CommandProver, EventsConfig, KeyRing, SigningKey } from '@gatehouse/events';
import { healthOf, redisReady, registryReady, withTeardown } from '@gatehouse/runtime';
import { DelegationWriter, Keyspace, RunRegistry, RunTokens } from '@gatehouse/state';
import type { Redis, Run } from '@gatehouse/state';
import { GatehouseMetrics } from '@gatehouse/telemetry';
import type { Logger } from '@gatehouse/telemetry';
import { startHttpFront } from './http-front.js';
import { McpAuth } from './mcp-auth.js';
import type { PeopleSignIn } from './mcp-auth.js';
import { TaskWaits } from './task-waits.js';
import type { FrontDoor } from './front-door.js';
import { requireLiveToken, requireRunKey, startStdioFront } from './stdio-front.js';

export interface McpServiceOptions {
  readonly events: EventsConfig;
  readonly redis: Redis;
  readonly redisPrefix: string;
  readonly catalog: Catalog;
  readonly logger: Logger;
  /** Streamable HTTP on host:port, or one run on stdin/stdout with its token. */
  readonly transport:
    | {
        readonly kind: 'http';
        readonly host: string;
        /** 0 picks a free port. */
        readonly port: number;
        readonly publicUrl?: string | undefined;
        readonly allowedHosts?: readonly string[] | undefined;
        readonly allowedOrigins?: readonly string[] | undefined;
        /** What proves its clients' commands, for any run it is shown (MCP_SIGNING_KEY): the policy service lists its public half. */
        readonly signingKey: SigningKey;
      }
    | {
        readonly kind: 'stdio';
        readonly token: string;
        /** The run's own key (`run_key`, GATEHOUSE_RUN_KEY): the one run's commands are proved with it. */
        readonly runKey: string;
      };
  readonly waitMs: number;
  readonly progressMs: number;
  readonly taskTtlMs: number;
  /** How long a task stays with the instance waiting for it once it stops renewing; default 15 s. */
  readonly taskLeaseMs?: number;
  /** The longest ttlMs of a 2026-07-28 tools/list; default 5 minutes. */
  readonly listTtlMs?: number;
  readonly clientId?: string;
  /** People signing in through their MCP client (IdP tokens and the agent policy); unset: run tokens only. */
  readonly people?: PeopleSignIn;
  /** The keys of the services that answer: an answer none of them signed never reaches an MCP client. */
  readonly resultKeys: KeyRing;
}

export interface RunningMcpService {
  /** The MCP endpoint (`…/mcp`), or `stdio`. */
  readonly url: string;
  stop(): Promise<void>;
}

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

// Servers are made per request; each would otherwise build its own Ajv instance.
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

/** Wires the front door: one Kafka client for every run it serves, the run tokens, the transport. */
export async function startMcpService(options: McpServiceOptions): Promise<RunningMcpService> {
  return withTeardown(async (teardown) => {
    const keys = new Keyspace(options.redisPrefix);
    const runs = new RunRegistry(options.redis, keys);
    const runTokens = new RunTokens(options.redis, keys, runs);
    // A stdio front door serves one run: a token that names none is refused before Kafka is touched.
    const stdioRun = options.transport.kind === 'stdio' ? await requireLiveToken(runTokens, options.transport.token) : undefined;
    const prover = proverOf(options.transport, stdioRun);
    const metrics = new GatehouseMetrics({ tools: options.catalog.tools() });
    // The tools it lists are the published ones, or it does not start (CONTRACT_CHANGED).
    await publishContracts(
      { registryUrl: options.events.registryUrl, topics: topicNames(options.events.topicPrefix) },
      options.catalog.tools(),
    );
    const client = await createClient({
      resultKeys: options.resultKeys,
      onUntrusted: (reason) => metrics.untrustedRecord('results', reason),
      config: options.events,
      topics: topicNames(options.events.topicPrefix),
      clientId: options.clientId ?? 'gatehouse-mcp',
      logger: options.logger,
      defaultTimeoutMs: options.waitMs,
      prover,
    });
    teardown.add(() => client.close());
    const waits = new TaskWaits(options.redis, keys, randomUUID(), options.taskLeaseMs ?? 15_000, options.logger);
    // Before the client closes: a wait stopped by shutdown stores nothing, and another instance takes over.
    teardown.add(() => waits.close());
    const door: FrontDoor = {
      client,
      catalog: options.catalog,
      redis: options.redis,
      keys,
      logger: options.logger,
      waitMs: options.waitMs,
      progressMs: options.progressMs,
      taskTtlMs: options.taskTtlMs,
      listTtlMs: options.listTtlMs ?? 300_000,
      waits,
      jsonSchemaValidator: SHARED_VALIDATOR,
      version: VERSION,
    };
    const transport = options.transport;
    if (transport.kind === 'stdio') {
      const stdio = startStdioFront(stdioRun ?? (await requireLiveToken(runTokens, transport.token)), transport.token, runTokens, door);
      teardown.add(stdio.stop);
      return { url: 'stdio', stop: () => teardown.close() };
    }
    const http = await startHttpFront({
      host: transport.host,
      port: transport.port,
      publicUrl: transport.publicUrl,
      allowedHosts: transport.allowedHosts,
      allowedOrigins: transport.allowedOrigins,
      auth: new McpAuth(runTokens, runs, options.people, options.logger, delegationWriter(options, keys)),
      door,
      health: healthOf({ redis: redisReady(options.redis), registry: registryReady(options.events.registryUrl) }),
      metrics,
      logger: options.logger,
    });
    teardown.add(http.stop);
    return { url: http.url, stop: () => teardown.close() };
  });
}

/** Where a signed-in person's token is kept, sealed, for token exchange; none without the executors' sealing keys. */
function delegationWriter(options: McpServiceOptions, keys: Keyspace): DelegationWriter | undefined {
  const delegation = options.people?.delegation;
  return delegation === undefined ? undefined : new DelegationWriter(options.redis, keys, delegation.sealer);
}

/**
 * How the front door proves the commands it sends: over HTTP with its own key, for whichever run a
 * request's token or sign-in names; over stdio with its one run's own key, checked against the run.
 */
function proverOf(transport: McpServiceOptions['transport'], stdioRun: Run | undefined): CommandProver {
  if (transport.kind === 'stdio') {
    const key = requireRunKey(stdioRun as Run, transport.runKey);
    return (command, replyPartition) => key.prove(command, replyPartition);
  }
  const { keyId, privateKey } = transport.signingKey;
  return (command, replyPartition) => frontDoorProof(keyId, privateKey, command, replyPartition);
}
