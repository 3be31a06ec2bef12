import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';
import type { TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';
import type { RunWithToken } from './mcp.js';

export const ENVELOPE_REVISION = '2026-07-28';
export const TASKS = 'io.modelcontextprotocol/tasks';
const CLIENT_INFO = { name: 'gatehouse-test-2026', version: '1.0.0' };

/** The per-request `_meta` envelope of protocol revision 2026-07-28. */
export function envelope(capabilities: Record<string, unknown> = { extensions: { [TASKS]: {} } }): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': ENVELOPE_REVISION,
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
}

export interface RawAnswer {
  readonly status: number;
  readonly body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

/** The header Streamable HTTP mirrors a request's name into: the tool, or the task. */
function nameOf(params: Record<string, unknown> | undefined): string | undefined {
  const value = params?.['name'] ?? params?.['taskId'];
  return typeof value === 'string' ? value : undefined;
}

/**
 * One 2026-07-28 request as the wire has it, with the headers Streamable HTTP mirrors (Mcp-Method,
 * Mcp-Name, MCP-Protocol-Version). `headers` replaces or adds any of them.
 */
export async function rawRequest(
  url: string,
  token: string,
  message: { id?: number | string; method: string; params?: Record<string, unknown> },
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const name = nameOf(message.params);
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': ENVELOPE_REVISION,
      'mcp-method': message.method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: message.id ?? 1, method: message.method, params: message.params ?? {} }),
  });
  const text = await response.text();
  // An answer that streamed (progress before the result) ends with the result's data line.
  const json =
    response.headers.get('content-type')?.startsWith('text/event-stream') === true
      ? (text
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6))
          .at(-1) ?? '{}')
      : text;
  return { status: response.status, body: JSON.parse(json) as RawAnswer['body'] };
}

/** The current SDK's client, pinned to 2026-07-28 (no fallback), with the run's token. */
export async function connectEnvelope(url: string, run: RunWithToken, capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: ENVELOPE_REVISION } }, capabilities });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${run.mcp_token}` } } }),
  );
  return client;
}

/**
 * The Tasks extension's own requester (`@modelcontextprotocol/ext-tasks`) over a pinned client. The
 * SDK client's codecs do not carry task results, so its requests go out through a plain fetch that
 * adds the run's token and the routing headers.
 */
export async function taskSession(url: string, run: RunWithToken): Promise<{ client: Client; session: TaskEnabledSession }> {
  const client = await connectEnvelope(url, run, { extensions: { [TASKS]: {} } });
  let id = 0;
  const session = createTaskSessionFromClient(client, {
    endpointId: `gatehouse-test:${url}`,
    v2RequestFraming: { protocolVersion: ENVELOPE_REVISION, clientInfo: CLIENT_INFO, clientCapabilities: { extensions: { [TASKS]: {} } } },
    rawDispatch: async (request) => {
      const message = request as { id?: number | string; method: string; params?: Record<string, unknown> };
      id += 1;
      const answer = await rawRequest(url, run.mcp_token, { ...message, id: message.id ?? `raw-${id}` });
      if (answer.body.error !== undefined) return { kind: 'error', error: answer.body.error as never };
      return { kind: 'result', result: (answer.body.result ?? {}) as never };
    },
  });
  return { client, session };
}
