// Every Gatehouse metric, defined once. Labels are closed sets, catalog tool addresses, error codes,
// schema-bounded JSON pointers, topics and partitions; tenants only on the slot gauge. Never an
// argument, a result, or an id (command, run, proposal, operation): those go to logs.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { codeLabel, methodLabel, oneOf, ToolLabelSet } from './labels.js';
import type { ToolLike } from './labels.js';
import { processRegistry } from './process-metrics.js';

/** What the policy service did with a command. */
export const PolicyOutcome = { routed: 'routed', refused: 'refused', approval_requested: 'approval_requested' } as const;
export type PolicyOutcome = (typeof PolicyOutcome)[keyof typeof PolicyOutcome];

/** Where a call is counted or a result published. */
export const Stage = { policy: 'policy', executor: 'executor', approval: 'approval' } as const;
export type Stage = (typeof Stage)[keyof typeof Stage];

export const RESULT_STATUSES = ['ok', 'error', 'pending_approval', 'unknown'] as const;
export const APPROVAL_DECISIONS = ['approved', 'rejected', 'expired'] as const;
export const RETRY_CLASSES = ['safe', 'idempotent', 'never'] as const;
export const UNKNOWN_REASONS = ['owner_lost', 'timeout', 'ambiguous_answer', 'status_unavailable'] as const;
export const OUTPUT_VIOLATION_CODES = ['OUTPUT_INVALID', 'RESULT_TOO_LARGE'] as const;
/** Why a reader refused a signed record as untrusted (the verifier's reasons). */
const UNTRUSTED_ORDER_REASONS = [
  'unsigned',
  'unknown_key',
  'wrong_role',
  'bad_signature',
  'arguments_altered',
  'expired',
  'stale',
  // A command's proof of its run (the policy service's check).
  'unproven',
  'unknown_prover',
  'bad_proof',
  'run_has_no_key',
] as const;
/** The signed topics other than `execute`, whose refused records are counted together. */
const SIGNED_RECORD_KINDS = ['commands', 'approvalsRequested', 'approvalsDecided', 'results', 'operator'] as const;
/** Why an executor published nothing for a trusted order. */
export const DUPLICATE_ORDER_REASONS = ['answered', 'command_id_reused'] as const;

/** 1 ms to 30 s: a refusal at the policy service is milliseconds, a slow write tens of seconds. */
export const LATENCY_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

const TOOL = ['tool', 'version'] as const;

/** The catalogue of metrics: name, help and label names. The unit tests pin it. */
export const METRICS = {
  calls: {
    name: 'gatehouse_calls_total',
    help: 'Tool calls by stage (policy: routed/refused/approval_requested; executor: ok/error/unknown), tool and version.',
    labelNames: ['stage', ...TOOL, 'outcome'],
  },
  callErrors: {
    name: 'gatehouse_call_errors_total',
    help: 'Error results by stage, tool, version and error code.',
    labelNames: ['stage', ...TOOL, 'code'],
  },
  validationErrors: {
    name: 'gatehouse_validation_errors_total',
    help: 'Refused arguments by error code and the JSON pointer (schema-bounded) of the first failure.',
    labelNames: [...TOOL, 'code', 'field'],
  },
  approvalDecisions: {
    name: 'gatehouse_approval_decisions_total',
    help: 'Approval requests decided: approved, rejected or expired.',
    labelNames: [...TOOL, 'decision'],
  },
  versionConflicts: {
    name: 'gatehouse_version_conflicts_total',
    help: 'Writes the system of record refused because the target changed since its proposal.',
    labelNames: TOOL,
  },
  unknownOutcomes: {
    name: 'gatehouse_unknown_outcomes_total',
    help: 'Writes whose outcome could not be established and went to an operator.',
    labelNames: [...TOOL, 'reason'],
  },
  retries: {
    name: 'gatehouse_retries_total',
    help: 'Handler runs retried (safe reads) and repeated writes answered from their stored outcome (idempotent), by retry class.',
    labelNames: [...TOOL, 'retry_class'],
  },
  outputViolations: {
    name: 'gatehouse_output_violations_total',
    help: 'Results withheld because they broke the output schema or the byte bound.',
    labelNames: [...TOOL, 'code'],
  },
  slotsInUse: { name: 'gatehouse_slots_in_use', help: 'Tenant concurrency slots this executor holds now.', labelNames: ['tenant'] },
  consumerLag: {
    name: 'gatehouse_consumer_lag',
    help: 'Records of a partition not yet committed by the consumer group (log end offset minus committed offset).',
    labelNames: ['group', 'topic', 'partition'],
  },
  endToEndLatency: {
    name: 'gatehouse_end_to_end_latency_seconds',
    help: 'From the command\u2019s sent_at to its result being published, by the stage that published it.',
    labelNames: ['stage', ...TOOL, 'status'],
  },
  handlerDuration: { name: 'gatehouse_handler_duration_seconds', help: 'Time a tool handler ran, by tool.', labelNames: TOOL },
  untrustedOrders: {
    name: 'gatehouse_untrusted_orders_total',
    help: 'Execution orders an executor refused and dead-lettered because no key of the policy or approval service vouched for them (nothing ran, nothing was answered), by reason.',
    labelNames: ['reason'],
  },
  untrustedRecords: {
    name: 'gatehouse_untrusted_records_total',
    help: 'Commands that did not prove their run, and approval requests, decisions and results no key of a role that may issue them vouched for, that a reader refused and dead-lettered (or, read back from the approval database, left undecided and unpublished), by topic role and reason.',
    labelNames: ['kind', 'reason'],
  },
  duplicateOrders: {
    name: 'gatehouse_duplicate_orders_total',
    help: 'Signed orders an executor answered nothing for: their command was answered already (a replay, or a redelivery after the answer), or their command_id came with other arguments (kept in the execute DLQ).',
    labelNames: ['reason'],
  },
  duplicateCommands: {
    name: 'gatehouse_duplicate_commands_total',
    help: 'Commands the boundary did not answer because their command_id was already claimed: the same command again (redelivered or re-sent), or a different payload under a used id (kept in the commands DLQ).',
    labelNames: ['reason'],
  },
  identityRefusals: {
    name: 'gatehouse_identity_refusals_total',
    help: 'Requests refused because who sent them was not proved or may not do what they asked (a token of another issuer, expired or forged, a forged session, a missing CSRF token, claims that map to no role, another tenant), by surface and refusal code.',
    labelNames: ['surface', 'code'],
  },
  webhookDeliveries: {
    name: 'gatehouse_webhook_deliveries_total',
    help: "Webhook deliveries to approvers' tools, by outcome: delivered, retried (a failed attempt that will be tried again) or dead (dead-lettered after its attempts).",
    labelNames: ['outcome'],
  },
  callAssertions: {
    name: 'gatehouse_call_assertions_total',
    help: 'Call assertions the executor minted for handlers to present to their systems of record, by call kind (read, write, status).',
    labelNames: ['call'],
  },
  callRefusals: {
    name: 'gatehouse_call_refusals_total',
    help: 'Requests a system of record refused because their call assertion was missing, forged, expired, replayed or did not cover the request, by refusal code.',
    labelNames: ['code'],
  },
  tokenExchanges: {
    name: 'gatehouse_token_exchanges_total',
    help: "Tokens for a run's person that handlers asked for at the IdP by token exchange, by how each was had (cached, refreshed, exchanged) or why not (refused, unreachable).",
    labelNames: ['outcome'],
  },
  httpRequests: {
    name: 'gatehouse_http_requests_total',
    help: 'HTTP requests served, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'],
  },
  httpDuration: {
    name: 'gatehouse_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern and method.',
    labelNames: ['route', 'method'],
  },
} as const;

export interface MetricsOptions {
  /** The catalog's tools: only their addresses become tool labels, their input schemas bound `field`. */
  readonly tools?: readonly ToolLike[];
}

/** What the metrics read of a ToolResult. */
export interface ResultLike {
  readonly tool: string;
  readonly status: string;
  readonly error: { readonly code: string } | null;
}

/**
 * What the metrics read of a refusal: the `code` and `field` of the contracts' ToolError. Structural
 * so that telemetry, which every package depends on, depends on no Gatehouse package itself; a
 * ToolError is passed as it is (and so is the wire's ToolErrorEvent, whose absent `field` is null).
 */
export interface ErrorLike {
  readonly code: string;
  readonly field?: string | null | undefined;
}

type Labels<K extends keyof typeof METRICS> = (typeof METRICS)[K]['labelNames'][number];

/** Latencies beyond a day are a clock problem, not a latency: they are not observed. */
const MAX_LATENCY_MS = 24 * 3600 * 1000;

/**
 * The metrics of one service instance, in its own registry (several run in one test process).
 * Each method is one call site's whole instrumentation.
 */
export class GatehouseMetrics {
  /** This instance's metrics only; `scrape()` adds the process metrics. */
  readonly registry = new Registry();
  readonly contentType: string;
  readonly #scraped: Registry;
  readonly #tools: ToolLabelSet;
  readonly #calls: Counter<Labels<'calls'>>;
  readonly #callErrors: Counter<Labels<'callErrors'>>;
  readonly #validationErrors: Counter<Labels<'validationErrors'>>;
  readonly #approvalDecisions: Counter<Labels<'approvalDecisions'>>;
  readonly #versionConflicts: Counter<Labels<'versionConflicts'>>;
  readonly #unknownOutcomes: Counter<Labels<'unknownOutcomes'>>;
  readonly #retries: Counter<Labels<'retries'>>;
  readonly #outputViolations: Counter<Labels<'outputViolations'>>;
  readonly #slotsInUse: Gauge<Labels<'slotsInUse'>>;
  readonly #consumerLag: Gauge<Labels<'consumerLag'>>;
  readonly #endToEndLatency: Histogram<Labels<'endToEndLatency'>>;
  readonly #handlerDuration: Histogram<Labels<'handlerDuration'>>;
  readonly #untrustedOrders: Counter<Labels<'untrustedOrders'>>;
  readonly #untrustedRecords: Counter<Labels<'untrustedRecords'>>;
  readonly #duplicateOrders: Counter<Labels<'duplicateOrders'>>;
  readonly #duplicateCommands: Counter<Labels<'duplicateCommands'>>;
  readonly #identityRefusals: Counter<Labels<'identityRefusals'>>;
  readonly #webhookDeliveries: Counter<Labels<'webhookDeliveries'>>;
  readonly #callAssertions: Counter<Labels<'callAssertions'>>;
  readonly #callRefusals: Counter<Labels<'callRefusals'>>;
  readonly #tokenExchanges: Counter<Labels<'tokenExchanges'>>;
  readonly #httpRequests: Counter<Labels<'httpRequests'>>;
  readonly #httpDuration: Histogram<Labels<'httpDuration'>>;

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    this.#tools = new ToolLabelSet(options.tools ?? []);
    this.#calls = new Counter({ ...METRICS.calls, registers });
    this.#callErrors = new Counter({ ...METRICS.callErrors, registers });
    this.#validationErrors = new Counter({ ...METRICS.validationErrors, registers });
    this.#approvalDecisions = new Counter({ ...METRICS.approvalDecisions, registers });
    this.#versionConflicts = new Counter({ ...METRICS.versionConflicts, registers });
    this.#unknownOutcomes = new Counter({ ...METRICS.unknownOutcomes, registers });
    this.#retries = new Counter({ ...METRICS.retries, registers });
    this.#outputViolations = new Counter({ ...METRICS.outputViolations, registers });
    this.#slotsInUse = new Gauge({ ...METRICS.slotsInUse, registers });
    this.#consumerLag = new Gauge({ ...METRICS.consumerLag, registers });
    const buckets = [...LATENCY_BUCKETS_SECONDS];
    this.#endToEndLatency = new Histogram({ ...METRICS.endToEndLatency, buckets, registers });
    this.#handlerDuration = new Histogram({ ...METRICS.handlerDuration, buckets, registers });
    this.#untrustedOrders = new Counter({ ...METRICS.untrustedOrders, registers });
    this.#untrustedRecords = new Counter({ ...METRICS.untrustedRecords, registers });
    this.#duplicateOrders = new Counter({ ...METRICS.duplicateOrders, registers });
    this.#duplicateCommands = new Counter({ ...METRICS.duplicateCommands, registers });
    this.#identityRefusals = new Counter({ ...METRICS.identityRefusals, registers });
    this.#webhookDeliveries = new Counter({ ...METRICS.webhookDeliveries, registers });
    this.#callAssertions = new Counter({ ...METRICS.callAssertions, registers });
    this.#callRefusals = new Counter({ ...METRICS.callRefusals, registers });
    this.#tokenExchanges = new Counter({ ...METRICS.tokenExchanges, registers });
    this.#httpRequests = new Counter({ ...METRICS.httpRequests, registers });
    this.#httpDuration = new Histogram({ ...METRICS.httpDuration, buckets, registers });
    this.#scraped = Registry.merge([processRegistry(), this.registry]);
    this.contentType = this.#scraped.contentType;
  }

  /** The Prometheus text of this service and its process, for `GET /metrics`. */
  scrape(): Promise<string> {
    return this.#scraped.metrics();
  }

  /** A policy decision; a refusal also counts its code and, for bad arguments, the failing field. */
  policyDecision(tool: string, outcome: PolicyOutcome, error?: ErrorLike): void {
    const labels = this.#tools.of(tool);
    this.#calls.inc({ stage: Stage.policy, ...labels, outcome });
    if (error === undefined) return;
    const code = codeLabel(error.code);
    this.#callErrors.inc({ stage: Stage.policy, ...labels, code });
    if (typeof error.field === 'string') this.#validationErrors.inc({ ...labels, code, field: this.#tools.field(tool, error.field) });
  }

  /** A result the executor published: its outcome, its error code, and its end-to-end latency. */
  executed(result: ResultLike, sentAt: number | undefined): void {
    const labels = this.#tools.of(result.tool);
    this.#calls.inc({ stage: Stage.executor, ...labels, outcome: oneOf(RESULT_STATUSES, result.status) });
    if (result.error !== null) this.#callErrors.inc({ stage: Stage.executor, ...labels, code: codeLabel(result.error.code) });
    this.resultPublished(Stage.executor, result, sentAt);
  }

  /** End-to-end latency of a published result, when the command's send time is known. */
  resultPublished(stage: Stage, result: ResultLike, sentAt: number | undefined, now = Date.now()): void {
    if (sentAt === undefined) return;
    const ms = now - sentAt;
    if (ms < 0 || ms > MAX_LATENCY_MS) return;
    this.#endToEndLatency.observe({ stage, ...this.#tools.of(result.tool), status: oneOf(RESULT_STATUSES, result.status) }, ms / 1000);
  }

  approvalDecision(tool: string, decision: string): void {
    this.#approvalDecisions.inc({ ...this.#tools.of(tool), decision: oneOf(APPROVAL_DECISIONS, decision) });
  }

  /** A signed record refused because no trusted key of a role that may issue it vouched for it: `role` is its topic's. */
  untrustedRecord(role: string, reason: string): void {
    const label = oneOf(UNTRUSTED_ORDER_REASONS, reason);
    if (role === 'execute') this.#untrustedOrders.inc({ reason: label });
    else this.#untrustedRecords.inc({ kind: oneOf(SIGNED_RECORD_KINDS, role), reason: label });
  }

  /** A caller refused by who they are: `surface` is the API, `code` an identity refusal of the one error catalogue (IDENTITY_REFUSALS) (never caller text). */
  identityRefused(surface: 'approval' | 'control' | 'mcp', code: string): void {
    this.#identityRefusals.inc({ surface, code });
  }

  /** One webhook delivery attempt's outcome. */
  webhookDelivery(outcome: 'delivered' | 'retried' | 'dead'): void {
    this.#webhookDeliveries.inc({ outcome });
  }

  /** A call assertion minted for a handler. */
  callAssertion(call: 'read' | 'write' | 'status'): void {
    this.#callAssertions.inc({ call });
  }

  /** How a handler's token by exchange was had: from the cache, refreshed, exchanged anew, or refused or unreachable. */
  tokenExchange(outcome: 'cached' | 'refreshed' | 'exchanged' | 'refused' | 'unreachable'): void {
    this.#tokenExchanges.inc({ outcome });
  }

  /** A request a system of record refused by its call assertion: `code` an assertion refusal of the one error catalogue (ASSERTION_REFUSALS) (never caller text). */
  callRefused(code: string): void {
    this.#callRefusals.inc({ code });
  }

  /** A trusted order the executor answered nothing for. */
  duplicateOrder(reason: (typeof DUPLICATE_ORDER_REASONS)[number]): void {
    this.#duplicateOrders.inc({ reason });
  }

  /** A command left unanswered because its command_id was claimed before: `repeat` (same payload) or `reused_id` (another payload). */
  duplicateCommand(reason: 'repeat' | 'reused_id'): void {
    this.#duplicateCommands.inc({ reason });
  }

  versionConflict(tool: string): void {
    this.#versionConflicts.inc(this.#tools.of(tool));
  }

  unknownOutcome(tool: string, reason: string): void {
    this.#unknownOutcomes.inc({ ...this.#tools.of(tool), reason: oneOf(UNKNOWN_REASONS, reason) });
  }

  retry(tool: string, retryClass: string): void {
    this.#retries.inc({ ...this.#tools.of(tool), retry_class: oneOf(RETRY_CLASSES, retryClass) });
  }

  /** Counts `code` when it is an output violation (OUTPUT_INVALID, RESULT_TOO_LARGE); ignores any other. */
  outputViolation(tool: string, code: string): void {
    const violation = oneOf(OUTPUT_VIOLATION_CODES, code);
    if (violation !== 'other') this.#outputViolations.inc({ ...this.#tools.of(tool), code: violation });
  }

  /** A handler's run time; null (nothing ran) is not observed. */
  handlerDuration(tool: string, ms: number | null): void {
    if (ms !== null && ms >= 0) this.#handlerDuration.observe(this.#tools.of(tool), ms / 1000);
  }

  slotsAcquired(tenant: string): void {
    this.#slotsInUse.inc({ tenant });
  }

  slotsReleased(tenant: string): void {
    this.#slotsInUse.dec({ tenant });
  }

  consumerLag(group: string, topic: string, partition: number, lag: number): void {
    this.#consumerLag.set({ group, topic, partition: String(partition) }, lag);
  }

  /** One HTTP request; `route` is the route's pattern (`/customers/:id`), never the URL. */
  httpRequest(route: string | undefined, method: string, status: number, ms: number): void {
    const labels = { route: route ?? 'unmatched', method: methodLabel(method) };
    this.#httpRequests.inc({ ...labels, status: String(status) });
    this.#httpDuration.observe(labels, ms / 1000);
  }
}
