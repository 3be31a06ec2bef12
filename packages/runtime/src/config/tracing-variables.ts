import { SERVICES } from './component.js';
import { text, url } from './value-kind.js';
import { variable } from './variable.js';

/** OpenTelemetry's own names, read by every service and by the client (through @gatehouse/telemetry). */
export const TRACING_VARIABLES = {
  OTEL_EXPORTER_OTLP_ENDPOINT: variable(url({ schemes: ['http', 'https'] }), {
    readers: [...SERVICES, 'client'],
    unset: 'no spans are exported; trace context still travels in headers',
    doc: 'OpenTelemetry: export spans over OTLP/HTTP (JSON) to `<endpoint>/v1/traces`: the call, the policy decision, the approval request, the execution and the handler, with ids, tool, version and error code, never arguments',
  }),
  OTEL_SERVICE_NAME: variable(text(), {
    readers: [...SERVICES, 'client'],
    unset: '`gatehouse-<service>`, `gatehouse-client`',
    doc: '`service.name` of the spans this process exports',
  }),
};
