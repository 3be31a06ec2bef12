import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@gatehouse/telemetry';
import type { Health } from './health.js';

/** What `/metrics` serves; a GatehouseMetrics is one. */
export interface MetricsSource {
  readonly contentType: string;
  scrape(): Promise<string>;
}

export interface OpsServerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly health: Health;
  readonly metrics: MetricsSource;
  readonly logger: Logger;
  /** JSON documents served as they are, by path (the executor's `/.well-known/jwks.json`). */
  readonly documents?: Readonly<Record<string, unknown>>;
}

export interface OpsServer {
  /** Base URL of `/metrics`, `/healthz` and `/readyz`; undefined when the port was taken. */
  readonly url: string | undefined;
  readonly stop: () => Promise<void>;
}

/** An answer of the operations routes. */
export interface OpsReply {
  readonly statusCode: number;
  readonly contentType: string;
  readonly body: string;
}

type Reply = OpsReply;

const json = (statusCode: number, body: unknown): Reply => ({
  statusCode,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify(body),
});

/**
 * The answer of `/healthz`, `/readyz`, `/metrics` (and the served documents) to a GET or HEAD, or
 * undefined for any other request: what the ops endpoint serves, and what a service with an HTTP
 * server of its own (the MCP front door) serves beside its routes.
 */
export async function opsReply(
  request: IncomingMessage,
  options: Pick<OpsServerOptions, 'health' | 'metrics' | 'documents'>,
): Promise<OpsReply | undefined> {
  const path = (request.url ?? '/').split('?', 1)[0];
  if (request.method === 'GET' || request.method === 'HEAD') {
    if (path === '/healthz') {
      const live = options.health.live();
      return json(live.statusCode, live.body);
    }
    if (path === '/readyz') {
      const ready = await options.health.ready();
      return json(ready.statusCode, ready.body);
    }
    if (path === '/metrics') return { statusCode: 200, contentType: options.metrics.contentType, body: await options.metrics.scrape() };
    const document =
      path === undefined || options.documents === undefined || !Object.hasOwn(options.documents, path)
        ? undefined
        : options.documents[path];
    if (document !== undefined) return json(200, document);
  }
  return undefined;
}

async function replyTo(request: IncomingMessage, options: OpsServerOptions): Promise<Reply> {
  return (await opsReply(request, options)) ?? json(404, { error: { code: 'NOT_FOUND', message: 'no such route' } });
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** A wildcard address is served on loopback too; that is the URL a local caller can use. */
function urlOf(address: AddressInfo): string {
  if (address.family === 'IPv6') return `http://[${address.address === '::' ? '::1' : address.address}]:${address.port}`;
  return `http://${address.address === '0.0.0.0' ? '127.0.0.1' : address.address}:${address.port}`;
}

/**
 * The operations endpoint of a service without an HTTP API of its own (the executor): `/healthz`,
 * `/readyz` and `/metrics`. Probes and scrapes every few seconds are not worth a log line each. A
 * port already taken (several executors on one host without a port each) costs only the endpoint,
 * never the service: it is logged, not thrown.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const log = options.logger.child({ api: 'ops' });
  const server = createServer((request, response) => {
    void replyTo(request, options).then(
      (reply) =>
        response.writeHead(reply.statusCode, { 'content-type': reply.contentType }).end(request.method === 'HEAD' ? undefined : reply.body),
      (error: unknown) => {
        log.error({ err: error, url: request.url }, 'ops request failed');
        response
          .writeHead(500, { 'content-type': 'application/json; charset=utf-8' })
          .end(JSON.stringify({ error: { code: 'INTERNAL', message: 'unexpected failure' } }));
      },
    );
  });
  let address: AddressInfo;
  try {
    address = await listen(server, options.host, options.port);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
    log.error({ host: options.host, port: options.port }, 'ops port in use: /metrics, /healthz and /readyz are not served');
    return { url: undefined, stop: () => Promise.resolve() };
  }
  return {
    url: urlOf(address),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeIdleConnections();
      }),
  };
}
