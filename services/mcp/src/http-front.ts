import { createServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import {
  createMcpHandler,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import { GatehouseError } from '@gatehouse/contracts';
import { opsReply } from '@gatehouse/runtime';
import type { Health } from '@gatehouse/runtime';
import type { Run } from '@gatehouse/state';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import type { McpAuth } from './mcp-auth.js';
import { createEnvelopeRunServer } from './envelope-server.js';
import { answerPlainCall, plainCallResult, plainEnvelopeToolCall, plainToolCall } from './plain-call.js';
import { createHandshakeRunServer } from './handshake-server.js';
import type { FrontDoor } from './front-door.js';

export interface HttpFrontOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** The base URL clients use; undefined: the address listened on. */
  readonly publicUrl: string | undefined;
  /** Host headers answered; undefined: loopback names at the port listened on, and the public host. */
  readonly allowedHosts: readonly string[] | undefined;
  readonly allowedOrigins: readonly string[] | undefined;
  /** Who a request acts for: a run token, or a person's access token from the IdP. */
  readonly auth: McpAuth;
  readonly door: FrontDoor;
  readonly health: Health;
  readonly metrics: GatehouseMetrics;
  readonly logger: Logger;
}

export interface HttpFront {
  /** The MCP endpoint: `<base>/mcp`. */
  readonly url: string;
  readonly stop: () => Promise<void>;
}

/** The largest JSON-RPC request body read; the boundary's own argument limit is far below it. */
const MAX_BODY_BYTES = 1024 * 1024;
const MCP_PATH = '/mcp';
const METADATA_PATH = '/.well-known/oauth-protected-resource';

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

/** A JSON-RPC error answered outside any request (its id is unknown). */
const rpcError = (code: number, message: string): unknown => ({ jsonrpc: '2.0', error: { code, message }, id: null });

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BodyError(413, `the request body exceeds ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new BodyError(400, 'the request body is not JSON');
  }
}

/** A request body refused before it is parsed as JSON-RPC: too large (413) or not JSON (400). */
class BodyError extends GatehouseError<'PAYLOAD_TOO_LARGE' | 'INVALID_REQUEST'> {
  constructor(
    readonly status: 413 | 400,
    message: string,
  ) {
    super(status === 413 ? 'PAYLOAD_TOO_LARGE' : 'INVALID_REQUEST', message);
  }
}

/** Whether a request may be sent notifications before its answer: it carries a progress token. */
function wantsStream(body: unknown): boolean {
  if (Array.isArray(body)) return true;
  if (typeof body !== 'object' || body === null) return false;
  const params = (body as { params?: { _meta?: { progressToken?: unknown } } }).params;
  return params?._meta?.progressToken !== undefined;
}

function claimsEnvelope(message: unknown): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const meta = (message as { params?: { _meta?: unknown } }).params?._meta;
  return typeof meta === 'object' && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
}

/**
 * Whether a request could be 2026-07-28 traffic: a message (or a batch member) whose `_meta`
 * claims a protocol version, or an `MCP-Protocol-Version` header of 2026 or later.
 */
export function mayCarryEnvelope(body: unknown, versionHeader: string | string[] | undefined): boolean {
  const header = Array.isArray(versionHeader) ? versionHeader[0] : versionHeader;
  if (header !== undefined && header >= '2026') return true;
  return Array.isArray(body) ? body.some(claimsEnvelope) : claimsEnvelope(body);
}

/**
 * The request as the 2026-07-28 SDK reads it: a web Request with the headers, and no body — the SDK
 * is handed the body already parsed (building one from the text cost ≈ 40 µs of a call's CPU).
 */
function webRequestOf(req: IncomingMessage, url: string, signal: AbortSignal): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return new Request(url, { method: 'POST', headers, signal });
}

/** Writes the SDK's web Response to the Node response: a JSON answer at once, an SSE body as it comes. */
async function sendWeb(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  if (response.body === null || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const body = response.body === null ? undefined : Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, headers);
    res.end(body);
    return;
  }
  res.writeHead(response.status, headers);
  const stream = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
  await new Promise<void>((resolve) => res.once('close', resolve));
}

function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? '';
}

function listen(server: HttpServer, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** Where the front answers, known once it listens: its base URL and the Host and Origin headers it serves. */
interface Served {
  base: string;
  allowedHosts: Set<string>;
  allowedOrigins: Set<string>;
}

/** What the steps of a request share. */
interface Front {
  readonly options: HttpFrontOptions;
  /** Serves 2026-07-28 requests. */
  readonly envelope: McpHttpHandler;
  readonly served: Served;
}

/** Who an authenticated request acts for, or the status it was already answered with. */
type Caller = { readonly ok: true; readonly token: string; readonly run: Run } | { readonly ok: false; readonly status: number };

/**
 * Streamable HTTP without server-side sessions: every POST to /mcp is checked (Host, Origin, the
 * run's bearer token) and served by a server made for that run and that request, so any number of
 * instances can stand behind a load balancer. What outlives a request (tasks) is in Redis.
 */
export async function startHttpFront(options: HttpFrontOptions): Promise<HttpFront> {
  const log = options.logger.child({ front: 'http' });
  const served: Served = { base: '', allowedHosts: new Set<string>(), allowedOrigins: new Set<string>() };
  const envelope = envelopeHandler(options, log);
  const front: Front = { options, envelope, served };

  const http = createServer((req, res) => {
    const started = performance.now();
    route(front, req, res).then(
      ({ route: name, status }) => options.metrics.httpRequest(name, req.method ?? 'GET', status, performance.now() - started),
      (error: unknown) => {
        log.error({ err: error }, 'MCP request failed');
        if (!res.headersSent) send(res, 500, rpcError(-32603, 'Internal error'));
        else res.end();
      },
    );
  });
  const address = await listen(http, options.host, options.port);
  const port = address.port;
  const listenHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const base = options.publicUrl ?? `http://${listenHost}:${port}`;
  served.base = base;
  served.allowedHosts = new Set(
    options.allowedHosts ?? [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, new URL(base).host.toLowerCase()],
  );
  served.allowedOrigins = new Set(options.allowedOrigins ?? [...served.allowedHosts].flatMap((h) => [`http://${h}`, `https://${h}`]));
  return {
    url: `${base}${MCP_PATH}`,
    stop: async () => {
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await envelope.close();
    },
  };
}

/** The current SDK's handler, for requests that carry the 2026-07-28 envelope. */
function envelopeHandler(options: HttpFrontOptions, log: Logger): McpHttpHandler {
  return createMcpHandler(
    (ctx) => {
      const run = ctx.authInfo?.extra?.['run'] as Run | undefined;
      if (run === undefined) throw new Error('a 2026-07-28 request reached the SDK without its run');
      return createEnvelopeRunServer(run, options.door, { traceparentHeader: ctx.requestInfo?.headers.get('traceparent') ?? undefined });
    },
    {
      // 2025-11-25 requests never reach this handler: they are routed before it.
      legacy: 'reject',
      maxRequestBodySize: MAX_BODY_BYTES,
      onerror: (error) => log.debug({ err: error }, 'MCP 2026-07-28 request refused or failed'),
    },
  );
}

/** /mcp, the protected resource metadata, the ops endpoints, or a 404; with the route's name for metrics. */
async function route(front: Front, req: IncomingMessage, res: ServerResponse): Promise<{ route: string | undefined; status: number }> {
  const { options, served } = front;
  const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
  if (path === MCP_PATH) return { route: MCP_PATH, status: await handleMcp(front, req, res) };
  if (req.method === 'GET' && (path === METADATA_PATH || path === `${METADATA_PATH}${MCP_PATH}`)) {
    // RFC 9728 protected resource metadata: the IdP people sign in at through their MCP client,
    // when one is configured. Run tokens (`gatehouse runs create --mcp-token`) work either way.
    send(res, 200, {
      resource: `${served.base}${MCP_PATH}`,
      resource_name: 'Gatehouse',
      bearer_methods_supported: ['header'],
      authorization_servers: options.auth.issuer === undefined ? [] : [options.auth.issuer],
      ...(options.auth.scope === undefined ? {} : { scopes_supported: [options.auth.scope] }),
    });
    return { route: METADATA_PATH, status: 200 };
  }
  // /healthz, /readyz and /metrics, as every service's ops endpoint serves them.
  const ops = await opsReply(req, options);
  if (ops !== undefined) {
    res.writeHead(ops.statusCode, { 'content-type': ops.contentType }).end(req.method === 'HEAD' ? undefined : ops.body);
    return { route: path, status: ops.statusCode };
  }
  send(res, 404, { error: { code: 'NOT_FOUND', message: 'no such route; the MCP endpoint is /mcp' } });
  return { route: undefined, status: 404 };
}

/** One request to /mcp: checked (Host, Origin, method, bearer token, body), then served; to the status answered. */
async function handleMcp(front: Front, req: IncomingMessage, res: ServerResponse): Promise<number> {
  const refused = refuseUnserved(front.served, req, res);
  if (refused !== undefined) return refused;
  const caller = await authenticateCaller(front, req, res);
  if (!caller.ok) return caller.status;
  let body: unknown;
  try {
    body = await readBody(req);
  } catch (error) {
    const status = error instanceof BodyError ? error.status : 400;
    send(res, status, rpcError(-32700, error instanceof Error ? error.message : 'unreadable body'));
    return status;
  }
  return serveMcp(front, caller, req, res, body);
}

/** Answers a request from a Host or Origin not served here, or by a method other than POST; to its status. */
function refuseUnserved({ allowedHosts, allowedOrigins }: Served, req: IncomingMessage, res: ServerResponse): number | undefined {
  // DNS rebinding: a page on another site must not reach a front door on this machine's loopback.
  const host = (req.headers.host ?? '').toLowerCase();
  if (!allowedHosts.has(host)) {
    send(res, 403, rpcError(-32000, `Host ${host || '(none)'} is not served here (MCP_ALLOWED_HOSTS)`));
    return 403;
  }
  const origin = req.headers.origin?.toLowerCase();
  if (origin !== undefined && !allowedOrigins.has(origin)) {
    send(res, 403, rpcError(-32000, `Origin ${origin} is not allowed (MCP_ALLOWED_ORIGINS)`));
    return 403;
  }
  if (req.method !== 'POST') {
    // No sessions: nothing to resume on a GET stream and nothing to end with a DELETE.
    send(res, 405, rpcError(-32000, 'Method not allowed: this endpoint keeps no sessions; send requests with POST'), { allow: 'POST' });
    return 405;
  }
  return undefined;
}

/** The run a request's bearer token acts for; a missing or refused token is answered with its challenge. */
async function authenticateCaller({ options, served }: Front, req: IncomingMessage, res: ServerResponse): Promise<Caller> {
  const metadata = `${served.base}${METADATA_PATH}${MCP_PATH}`;
  const scope = options.auth.scope === undefined ? '' : `, scope="${options.auth.scope}"`;
  const token = bearerOf(req);
  if (token === undefined) {
    const how =
      options.auth.issuer === undefined
        ? "send the run's MCP token as Authorization: Bearer <token>"
        : `sign in at ${options.auth.issuer} (see ${metadata}), or send a run's MCP token`;
    send(res, 401, rpcError(-32001, `Unauthorized: ${how}`), {
      'www-authenticate': `Bearer realm="gatehouse", resource_metadata="${metadata}"${scope}`,
    });
    return { ok: false, status: 401 };
  }
  const check = await options.auth.authenticate(token);
  if (!check.ok) {
    options.metrics.identityRefused('mcp', check.code);
    const description = check.message.replaceAll('"', "'").slice(0, 300);
    const error = check.error === undefined ? '' : `, error="${check.error}", error_description="${description}"`;
    send(res, check.status, rpcError(-32001, `${check.status === 403 ? 'Forbidden' : 'Unauthorized'}: ${check.code}: ${check.message}`), {
      'www-authenticate': `Bearer realm="gatehouse", resource_metadata="${metadata}"${scope}${error}`,
    });
    return { ok: false, status: check.status };
  }
  return { ok: true, token, run: check.run };
}

/** Serves a checked request: a plain tools/call directly, else by the SDK of its revision; to the status answered. */
async function serveMcp(
  { options, envelope, served }: Front,
  { token, run }: Extract<Caller, { ok: true }>,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<number> {
  // One endpoint, two revisions, both on the current SDK: a request carrying the 2026-07-28
  // envelope goes to its per-request handler; a 2025-11-25 one (an initialize handshake, no
  // envelope) to a stateless server of that revision.
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  // Most requests are told apart without the SDK: no envelope claim and no 2026-07-28 header is
  // 2025-11-25. Anything that might carry one is classified by the SDK's own predicate.
  const maybeEnvelope = mayCarryEnvelope(body, req.headers['mcp-protocol-version']);
  // The common case on either revision, a lone tools/call answered with JSON, without an SDK server.
  const plain = maybeEnvelope ? plainEnvelopeToolCall(body, req.headers) : plainToolCall(body, req.headers);
  if (plain !== undefined) {
    const traceparent = req.headers.traceparent;
    const answer = await answerPlainCall(run, options.door, plain, typeof traceparent === 'string' ? traceparent : undefined, abort.signal);
    send(res, 200, { jsonrpc: '2.0', id: plain.id, result: plainCallResult(plain, options.door, answer) });
    return 200;
  }
  const request = webRequestOf(req, `${served.base}${MCP_PATH}`, abort.signal);
  if (maybeEnvelope && !(await isLegacyRequest(request, body))) {
    const response = await envelope.fetch(request, {
      parsedBody: body,
      authInfo: { token, clientId: run.run_id, scopes: [], extra: { run } },
    });
    await sendWeb(res, response);
    return response.status;
  }
  return serveHandshake(options, run, request, res, body);
}

/**
 * A 2025-11-25 request, served by a server made for that run and that request, without a session.
 * A request that can be told of progress gets an SSE stream; any other is answered with plain JSON,
 * which costs a client less to read.
 */
async function serveHandshake(options: HttpFrontOptions, run: Run, request: Request, res: ServerResponse, body: unknown): Promise<number> {
  const server = createHandshakeRunServer(run, options.door);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsStream(body) });
  res.once('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  const response = await transport.handleRequest(request, { parsedBody: body });
  await sendWeb(res, response);
  return response.status;
}
