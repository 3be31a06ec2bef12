import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

export const OTLP_ENDPOINT_VARIABLE = 'OTEL_EXPORTER_OTLP_ENDPOINT';
export const SERVICE_NAME_VARIABLE = 'OTEL_SERVICE_NAME';

export interface TracingOptions {
  /** The `service.name` spans are exported under, unless OTEL_SERVICE_NAME names another. */
  readonly serviceName: string;
  /** The OTLP/HTTP base URL (spans go to `<endpoint>/v1/traces`); default OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint?: string | undefined;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** This process's span export, as one user of it sees it. */
export interface Tracing {
  /** Whether Gatehouse's own provider exports the spans of this process. */
  readonly exporting: boolean;
  /** Lets go of the export; the last user to let go flushes what is buffered and stops it. Once, however often it is called. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { exporting: false, shutdown: () => Promise.resolve() };

/** How long a stopping process waits for its last spans to be accepted; an unreachable collector never holds it longer. */
const SHUTDOWN_TIMEOUT_MS = 2_000;

/** The one provider of this process and how many users hold it (services and clients sharing a process share it). */
let shared: { readonly provider: TracerProvider; users: number } | undefined;

/** Where OTLP/HTTP takes spans, from the base endpoint the OpenTelemetry variable names. */
export function tracesUrl(endpoint: string): string {
  return new URL('v1/traces', endpoint.endsWith('/') ? endpoint : `${endpoint}/`).toString();
}

/**
 * Starts exporting this process's spans over OTLP/HTTP when an endpoint is set, by registering
 * one global tracer provider (batching, sampling as the OTEL_TRACES_SAMPLER variables say, parent-based
 * by default). With no endpoint nothing is registered: the API's no-op tracer costs next to nothing,
 * and trace context still travels in headers. A process whose own code registered a provider keeps it.
 */
export function startTracing(options: TracingOptions): Tracing {
  const env = options.env ?? process.env;
  const endpoint = (options.endpoint ?? env[OTLP_ENDPOINT_VARIABLE] ?? '').trim();
  if (endpoint === '') return OFF;
  // The services' configuration schema has checked it already; the client's process reads it here.
  if (!/^https?:\/\/[^/]/.test(endpoint) || !URL.canParse(endpoint))
    throw new Error(`${OTLP_ENDPOINT_VARIABLE} is not an http:// or https:// URL`);
  if (shared === undefined) {
    const named = env[SERVICE_NAME_VARIABLE]?.trim() ?? '';
    const provider = new TracerProvider({
      resource: defaultResource().merge(resourceFromAttributes({ 'service.name': named === '' ? options.serviceName : named })),
      spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: tracesUrl(endpoint) }) })],
    });
    if (!trace.setGlobalTracerProvider(provider)) {
      void provider.shutdown();
      return OFF;
    }
    shared = { provider, users: 0 };
  }
  const held = shared;
  held.users += 1;
  let released: Promise<void> | undefined;
  return {
    exporting: true,
    shutdown: () => {
      released ??= (async () => {
        held.users -= 1;
        if (held.users > 0 || shared !== held) return;
        shared = undefined;
        let timer: NodeJS.Timeout | undefined;
        const bounded = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, SHUTDOWN_TIMEOUT_MS).unref();
        });
        try {
          await Promise.race([held.provider.shutdown(), bounded]);
        } finally {
          clearTimeout(timer);
          trace.disable();
        }
      })();
      return released;
    },
  };
}
