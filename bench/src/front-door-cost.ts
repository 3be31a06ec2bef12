// `node bench/dist/front-door-cost.js [calls]`: what the MCP front door's own HTTP and JSON-RPC work
// costs per tools/call, on each revision, apart from Kafka (CPU time of the front door's process per
// call, 10,000 calls by default, 64 in flight). The front door is the real one (`startHttpFront`);
// the run's token check and Gatehouse's answer are immediate, so what is measured is the framing:
// parsing the request, routing it, building the answer. A load generator in a child process sends
// plain calls (JSON answers) over keep-alive connections, as (m) and (m′)'s SDK clients do.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { startHttpFront } from '@gatehouse/mcp';
import type { HttpFrontOptions } from '@gatehouse/mcp';
import type { Run } from '@gatehouse/state';
import { benchCatalog, BENCH_ROLE } from './bench-catalog.js';

type Era = 'handshake' | 'envelope';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'gatehouse-bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

function request(era: Era, seq: number): RequestInit {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: 'Bearer ghr_bench',
  };
  const params: Record<string, unknown> = { name: 'bench_noop_v1', arguments: { seq, payload: 'x'.repeat(220) } };
  if (era === 'envelope') {
    Object.assign(headers, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'bench_noop_v1' });
    params['_meta'] = ENVELOPE;
  } else {
    headers['mcp-protocol-version'] = '2025-11-25';
  }
  return { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: seq, method: 'tools/call', params }) };
}

/** The child: sends `calls` plain calls, `inFlight` at a time, and reports how many were not ok. */
async function drive(url: string, era: Era, calls: number, inFlight: number): Promise<void> {
  let next = 0;
  let failed = 0;
  const lane = async (): Promise<void> => {
    while (next < calls) {
      const seq = next++;
      const response = await fetch(url, request(era, seq));
      const text = await response.text();
      if (response.status !== 200 || !text.includes('"ok":true')) failed += 1;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  process.send?.({ failed });
}

if (process.argv[2] === 'drive') {
  await drive(process.argv[3] as string, process.argv[4] as Era, Number(process.argv[5]), Number(process.argv[6]));
  process.exit(0);
}

const calls = Number(process.argv[2] ?? 10_000);
const catalog = benchCatalog().catalog;
const run = {
  run_id: 'run_bench',
  tenant: 'bench',
  role: BENCH_ROLE,
  capabilities: catalog.tools().map((t) => t.address),
  expires_at: Date.now() + 3_600_000,
} as unknown as Run;
const quiet = {
  child: () => quiet,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
const answer = (tool: string, rawArguments: string) => ({
  ok: true,
  commandId: 'cmd_bench',
  tool,
  operationId: null,
  result: { seq: (JSON.parse(rawArguments) as { seq: number }).seq, ok: true },
  content: 'untrusted_data',
  durationMs: 0,
});
const options = {
  host: '127.0.0.1',
  port: 0,
  publicUrl: undefined,
  allowedHosts: undefined,
  allowedOrigins: undefined,
  auth: { scope: undefined, issuer: undefined, authenticate: () => Promise.resolve({ ok: true, run, via: 'run_token' }) },
  door: {
    client: { call: (tool: string, _args: unknown, call: { rawArguments: string }) => Promise.resolve(answer(tool, call.rawArguments)) },
    catalog,
    logger: quiet,
    waitMs: 30_000,
    progressMs: 1_000,
    taskTtlMs: 600_000,
    listTtlMs: 300_000,
    jsonSchemaValidator: new AjvJsonSchemaValidator(),
    version: 'bench',
  },
  health: {},
  metrics: { identityRefused: () => undefined, httpRequest: () => undefined },
  logger: quiet,
} as unknown as HttpFrontOptions;
const front = await startHttpFront(options);

const load = (era: Era, count: number): Promise<{ failed: number }> =>
  new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['drive', front.url, era, String(count), '64']);
    child.once('message', (message) => resolve(message as { failed: number }));
    child.once('error', reject);
  });

for (const era of ['handshake', 'envelope'] as const) {
  await load(era, Math.ceil(calls / 5));
  const start = process.cpuUsage();
  const { failed } = await load(era, calls);
  const used = process.cpuUsage(start);
  if (failed > 0) throw new Error(`${failed} of ${calls} ${era} calls were not answered ok`);
  process.stdout.write(
    `tools/call, ${era === 'handshake' ? '2025-11-25' : '2026-07-28'}: ${((used.user + used.system) / calls).toFixed(0)} µs CPU per call in the front door\n`,
  );
}
await front.stop();
