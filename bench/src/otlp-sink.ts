import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** What the sink has received so far. */
export interface SinkCounts {
  /** POST /v1/traces requests answered 200. */
  readonly requests: number;
  /** Their bodies' bytes as sent (compressed, if they were). */
  readonly bytes: number;
  /** Spans in those bodies (OTLP/JSON or OTLP/protobuf); bodies it could not read count 0. */
  readonly spans: number;
  /** Requests whose body could not be read as OTLP. */
  readonly unreadable: number;
  /** When the last request arrived (ms since the epoch), 0 before the first. */
  readonly lastAt: number;
}

/** Reads a protobuf varint at `at`; returns the value and the offset after it. */
function varint(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  let i = at;
  for (;;) {
    const byte = bytes[i];
    if (byte === undefined) throw new Error('truncated varint');
    i += 1;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [value, i];
    shift += 7;
  }
}

/** The length-delimited fields numbered `field` of one protobuf message, as subarrays. */
function fieldsOf(message: Uint8Array, field: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < message.length) {
    const [tag, next] = varint(message, at);
    at = next;
    const wire = tag % 8;
    if (wire === 0) at = varint(message, at)[1];
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const [length, start] = varint(message, at);
      if (Math.floor(tag / 8) === field) out.push(message.subarray(start, start + length));
      at = start + length;
    } else throw new Error(`wire type ${wire}`);
  }
  return out;
}

/**
 * Spans in an ExportTraceServiceRequest: resource_spans (1) → scope_spans (2) → spans (2) in
 * protobuf; resourceSpans → scopeSpans → spans in JSON.
 */
const SPAN_ID_KEY = Buffer.from('"spanId"');

function spansIn(body: Uint8Array, json: boolean): number {
  if (json) {
    // Counted, not parsed: the sink shares the machine with what it measures, and parsing every
    // request cost more CPU per call than the tracing of one service. Every span has one
    // "spanId" key, and nothing else here has one (Gatehouse's spans carry no links).
    const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    let spans = 0;
    for (let at = text.indexOf(SPAN_ID_KEY); at !== -1; at = text.indexOf(SPAN_ID_KEY, at + SPAN_ID_KEY.length)) spans += 1;
    return spans;
  }
  return fieldsOf(body, 1).reduce((n, resource) => n + fieldsOf(resource, 2).reduce((m, scope) => m + fieldsOf(scope, 2).length, 0), 0);
}

/**
 * A loopback OTLP/HTTP trace receiver for the tracing arm: it accepts POST /v1/traces, counts
 * requests, bytes and spans, and answers 200 with an empty export response (`{}` to JSON, an empty
 * message to protobuf). Nothing is kept but the counts.
 */
export class OtlpSink {
  private counts = { requests: 0, bytes: 0, spans: 0, unreadable: 0, lastAt: 0 };

  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpSink> {
    const server = createServer();
    const sink = new OtlpSink(server);
    server.on('request', (request, response) => {
      if (request.method !== 'POST' || request.url?.split('?')[0] !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        const json = (request.headers['content-type'] ?? '').includes('json');
        sink.receive(body, json, request.headers['content-encoding'] === 'gzip');
        if (json) response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        else response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  /** The endpoint to put in OTEL_EXPORTER_OTLP_ENDPOINT (exporters append /v1/traces). */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get received(): SinkCounts {
    return { ...this.counts };
  }

  /** Resolves once no request has arrived for `quietMs`, or after `maxMs` at the latest. */
  async untilQuiet(quietMs: number, maxMs: number): Promise<void> {
    const started = Date.now();
    while (Date.now() - Math.max(this.counts.lastAt, started) < quietMs && Date.now() - started < maxMs) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private receive(body: Buffer, json: boolean, gzip: boolean): void {
    this.counts.requests += 1;
    this.counts.bytes += body.length;
    this.counts.lastAt = Date.now();
    try {
      this.counts.spans += spansIn(gzip ? gunzipSync(body) : body, json);
    } catch {
      this.counts.unreadable += 1;
    }
  }
}
