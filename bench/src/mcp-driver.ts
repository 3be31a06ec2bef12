import { Client as Sdk2Client, StreamableHTTPClientTransport as Sdk2Transport } from '@modelcontextprotocol/client';
import { Client as Sdk1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Sdk1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseToolAddress } from '@gatehouse/contracts';
import { closedLoop } from './closed-loop.js';
import { argumentPadding } from './driver.js';
import type { LoadReport, LoadSpec } from './driver.js';

/** Arms (m) and (m′): the MCP front door's endpoint and one bearer token per run. */
export interface McpDriverSetup {
  readonly kind: 'mcp';
  readonly url: string;
  /** A run's MCP token each; every token gets its own SDK client, as every agent run would. */
  readonly tokens: readonly string[];
  /** 2025-11-25 through the SDK 1.x client (m), or 2026-07-28 through the SDK 2.x client pinned to it (m′). */
  readonly era: 'handshake' | 'envelope';
}

/** What the driver needs of either SDK's client. */
interface Client {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

const CLIENT_INFO = { name: 'gatehouse-bench', version: '1.0.0' };

async function connect(setup: McpDriverSetup, token: string): Promise<Client> {
  const requestInit = { headers: { authorization: `Bearer ${token}` } };
  if (setup.era === 'envelope') {
    const client = new Sdk2Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new Sdk2Transport(new URL(setup.url), { requestInit }));
    return client;
  }
  const client = new Sdk1Client(CLIENT_INFO);
  await client.connect(new Sdk1Transport(new URL(setup.url), { requestInit }));
  return client;
}

/** A JSON-RPC error's code, as either SDK's error carries it. */
function rpcCodeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** `bench_noop.v1` → `bench_noop_v1`, the name MCP lists the tool under. */
function mcpName(address: string): string {
  const parsed = parseToolAddress(address);
  if (parsed === undefined) throw new Error(`${address} is not a tool address`);
  return `${parsed.name}_v${parsed.version}`;
}

/** The Gatehouse error code of a result with isError, else what kind of failure it was. */
function errorCodeOf(meta: unknown): string {
  const error = (meta as Record<string, unknown> | undefined)?.['gatehouse/error'];
  const code = (error as Record<string, unknown> | undefined)?.['code'];
  return typeof code === 'string' ? code : 'tool_error';
}

/**
 * The load generator of arms (m) and (m′): an official MCP SDK client over Streamable HTTP, one client per
 * run (a token names one run). A closed loop of `inFlight` calls is spread over the clients; each
 * answer releases the next call on the same client. Calls are `tools/call` requests answered on an
 * SSE stream by the front door, which publishes a ToolCommand and waits for its ToolResult.
 */
export class McpDriver {
  private seq = 0;

  private constructor(
    private readonly clients: readonly Client[],
    /** The tool names every client was offered by tools/list. */
    private readonly listed: ReadonlySet<string>,
  ) {}

  static async start(setup: McpDriverSetup): Promise<McpDriver> {
    const connecting = await Promise.allSettled(
      setup.tokens.map(async (token) => {
        return connect(setup, token);
      }),
    );
    const clients = connecting.flatMap((c) => (c.status === 'fulfilled' ? [c.value] : []));
    const failed = connecting.find((c) => c.status === 'rejected');
    try {
      if (failed !== undefined) throw failed.reason;
      if (clients.length === 0) throw new Error('arm m needs at least one run token');
      // Each client lists its run's tools once, as an MCP client does before calling them (the SDK
      // then checks every result against the tool's output schema); all runs hold the same role.
      const lists = await Promise.all(clients.map((c) => c.listTools()));
      const listed = new Set(lists.flatMap((l) => l.tools.map((t) => t.name)));
      return new McpDriver(clients, listed);
    } catch (error) {
      await Promise.allSettled(clients.map((c) => c.close()));
      throw error;
    }
  }

  run(spec: LoadSpec): Promise<LoadReport> {
    if (spec.mode.kind !== 'closed') throw new Error('the MCP arm runs closed loops only');
    const name = mcpName(spec.tool);
    if (!this.listed.has(name)) throw new Error(`the front door does not list ${name}`);
    const payload = argumentPadding(spec.argumentBytes);
    // Each lane keeps to one client, as an agent's calls keep to its session.
    return closedLoop(spec, spec.mode.inFlight, async (lane) => {
      const client = this.clients[lane % this.clients.length] as Client;
      const seq = this.seq++;
      try {
        const result = (await client.callTool({ name, arguments: { seq, payload } })) as { isError?: boolean; _meta?: unknown };
        return result.isError === true ? errorCodeOf(result._meta) : undefined;
      } catch (error) {
        // Never the arguments: a protocol error by its JSON-RPC code, anything else as the transport's.
        const rpc = rpcCodeOf(error);
        return rpc === undefined ? 'transport' : `mcp_${rpc}`;
      }
    });
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.clients.map((c) => c.close()));
  }
}
