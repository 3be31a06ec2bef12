import { createServer } from 'node:http2';
import type { Http2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as restate from '@restatedev/restate-sdk';
import type { LogMetadata } from '@restatedev/restate-sdk';
import { ack, checkArguments } from './governed-call.js';
import type { Ack, PayloadArguments } from './governed-call.js';

/**
 * The Restate anchor's service endpoint: a child of the bench (`fork` of the compiled file) that
 * serves the service `bench` with Restate's TypeScript SDK over HTTP/2 (h2c) on a loopback port.
 * `read` validates its arguments and answers; `write` validates them and runs one durable step
 * (`ctx.run`), which Restate journals before the answer leaves. The Restate server calls it; the
 * bench never does. Usage: `node restate-endpoint.js [port]`, port 0 (the default) for any free one.
 */

/** What the endpoint tells its parent once it listens: the port it got. */
export interface EndpointReady {
  readonly listening: number;
}

/** The arguments, or a terminal 400 that names what is wrong (Ajv's paths and rules, never the values). */
function checked(input: unknown): PayloadArguments {
  const checking = checkArguments(input);
  if ('args' in checking) return checking.args;
  throw new restate.TerminalError(`invalid arguments: ${checking.refusal}`, { errorCode: 400 });
}

const bench = restate.service({
  name: 'bench',
  handlers: {
    read: (_ctx: restate.Context, input: unknown): Promise<Ack> => Promise.resolve(ack(checked(input).seq)),
    write: (ctx: restate.Context, input: unknown): Promise<Ack> => {
      const { seq } = checked(input);
      return ctx.run('apply', (): Ack => ack(seq));
    },
  },
});

/** The SDK's start-up warning about unsigned requests: the endpoint listens on 127.0.0.1 only. */
const UNSIGNED_REQUESTS = 'Accepting requests without validating request signatures';

/**
 * The SDK logs two lines per invocation at info, and a warning for every terminal error: a 400 for
 * bad arguments is an answer, not a fault. Only the endpoint's own faults reach stderr, and the
 * lines carry the SDK's message, never the invocation's arguments.
 */
function faultsOnly(meta: LogMetadata, message?: unknown, ...rest: unknown[]): void {
  // The SDK's level enum is a type only in its ESM build: compare its string values.
  const level: string = meta.level;
  const warning = level === 'warn' && !(rest[0] instanceof restate.TerminalError) && !String(message).startsWith(UNSIGNED_REQUESTS);
  if (meta.replaying || !(level === 'error' || warning)) return;
  const details = rest.map((item) => (item instanceof Error ? (item.stack ?? item.message) : String(item)));
  process.stderr.write(`restate-endpoint ${level}: ${String(message)} ${details.join(' ')}\n`);
}

/**
 * Listens on 127.0.0.1 and reports the port (over the IPC channel of `fork`, else as a line on
 * stdout). SIGTERM closes the server and its sessions and exits 0; the loss of the parent exits
 * at once, so no endpoint outlives the bench.
 */
function main(): void {
  const port = Number(process.argv[2] ?? '0');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`restate-endpoint: not a port: ${process.argv[2]}`);
  const sessions = new Set<Http2Session>();
  const server = createServer(restate.createEndpointHandler({ services: [bench], logger: faultsOnly }));
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.listen(port, '127.0.0.1', () => {
    const ready: EndpointReady = { listening: (server.address() as AddressInfo).port };
    if (process.send !== undefined) process.send(ready);
    else process.stdout.write(`listening ${ready.listening}\n`);
  });
  process.on('disconnect', () => process.exit(1));
  process.once('SIGTERM', () => {
    server.close(() => process.exit(0));
    // The Restate server keeps its HTTP/2 connections open between invocations: ask each to end.
    for (const session of sessions) session.close();
    setTimeout(() => process.exit(0), 2_000).unref();
  });
}

main();
