import { readFileSync } from 'node:fs';
import type { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import type { Tables } from './db.js';
import type { StoredRequest } from './request-repository.js';

/** What approvers are told of, as `type` of the notification. */
export const WEBHOOK_EVENTS = [
  'approval.requested',
  'approval.approved',
  'approval.rejected',
  'approval.expired',
  'approval.withdrawn',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** One receiver: where, which events (default all) of which tenants (default all), and its signing secret. */
export interface WebhookEndpoint {
  readonly id: string;
  readonly url: string;
  readonly events: readonly WebhookEvent[];
  readonly tenants: readonly string[] | null;
  /** `whsec_<base64>`, shared with this receiver only (Standard Webhooks' symmetric signature, v1). */
  readonly secret: string;
}

export interface WebhookSettings {
  readonly endpoints: readonly WebhookEndpoint[];
  /** Tries before a delivery is dead-lettered (default 8). */
  readonly attempts: number;
  /** The first retry's delay; each next one doubles, up to 10 minutes (default 1 s). */
  readonly backoffMs: number;
  /** How long one delivery may take (default 5 s). */
  readonly timeoutMs: number;
}

const DOCUMENT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['endpoints'],
  properties: {
    $schema: { type: 'string' },
    $comment: { type: 'string' },
    endpoints: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'url', 'secret_env'],
        properties: {
          id: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' },
          url: { type: 'string', minLength: 8, maxLength: 2000 },
          events: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: WEBHOOK_EVENTS } },
          tenants: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' } },
          secret_env: { type: 'string', pattern: '^[A-Z][A-Z0-9_]{0,100}$' },
          $comment: { type: 'string' },
        },
      },
    },
  },
} as const;

interface EndpointEntry {
  readonly id: string;
  readonly url: string;
  readonly events?: WebhookEvent[];
  readonly tenants?: string[];
  readonly secret_env: string;
}

const validate = new Ajv2020({ strict: true, allErrors: true }).compile<{ endpoints: EndpointEntry[] }>(DOCUMENT_SCHEMA);

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Reads the webhook endpoints document (APPROVAL_WEBHOOKS_FILE) and each endpoint's secret from the
 * variable it names, so the document holds no secret. Checked at start-up: the schema, HTTPS (plain
 * HTTP on loopback only), unique ids, and every secret present and in the `whsec_` form.
 */
export function parseWebhookEndpoints(document: unknown, env: Readonly<Record<string, string | undefined>>): WebhookEndpoint[] {
  if (!validate(document)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
    throw new Error(`the webhooks file is invalid: ${problems.join('; ')}`);
  }
  const problems: string[] = [];
  const ids = new Set<string>();
  const endpoints = document.endpoints.map((entry) => {
    if (ids.has(entry.id)) problems.push(`endpoint ${entry.id} is listed twice`);
    ids.add(entry.id);
    let url: URL | undefined;
    try {
      url = new URL(entry.url);
    } catch {
      problems.push(`endpoint ${entry.id}: ${entry.url} is not a URL`);
    }
    if (url !== undefined && url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
      problems.push(`endpoint ${entry.id}: must be HTTPS (plain HTTP only on loopback)`);
    }
    const secret = env[entry.secret_env];
    if (secret === undefined || !/^whsec_[A-Za-z0-9+/]{22,}={0,2}$/.test(secret))
      problems.push(`endpoint ${entry.id}: ${entry.secret_env} must hold its secret, whsec_<base64 of 24+ bytes>`);
    return {
      id: entry.id,
      url: entry.url,
      events: entry.events ?? [...WEBHOOK_EVENTS],
      tenants: entry.tenants ?? null,
      secret: secret ?? '',
    };
  });
  if (problems.length > 0) throw new Error(`the webhooks file is invalid: ${problems.join('; ')}`);
  return endpoints;
}

export function loadWebhookEndpoints(path: string, env: Readonly<Record<string, string | undefined>>): WebhookEndpoint[] {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (error) {
    throw new Error(`the webhooks file ${path} cannot be read: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return parseWebhookEndpoints(document, env);
}

/** The event a decided (or new) request announces. */
export function eventOf(row: StoredRequest, withdrawnReason: string): WebhookEvent {
  if (row.state === 'pending') return 'approval.requested';
  if (row.state === 'rejected' && row.decided_by === 'gatehouse' && row.reason === withdrawnReason) return 'approval.withdrawn';
  return `approval.${row.state}`;
}

/**
 * A value others chose (a person's name, a target id an agent's arguments named) as the one-line
 * chat text may carry it: letters, digits, spaces and `@ . _ ' -` only, with each dot a one-dot
 * leader (U+2024), so chat tools make no link of it: the only link in the line is the console's.
 * The notification's `data` keeps every value exactly.
 */
function chatText(value: string): string {
  return value
    .replace(/[^\p{L}\p{N} @._'-]/gu, '')
    .replaceAll('.', '\u2024')
    .slice(0, 80);
}

/**
 * The notification of one event of one request: what approvers need to act — the tool, the
 * target, the approver role, the expiry, a console link, on whose behalf — and never the arguments
 * or the diff (they may hold personal data; the console shows them to the signed-in approver).
 * `text` is one line for chat tools (Slack, Teams) that show a message as it comes.
 */
export function notificationOf(
  row: StoredRequest,
  event: WebhookEvent,
  consoleUrl: string,
  now = Date.now(),
): { readonly id: string; readonly body: string } {
  const { request } = row;
  const link = `${consoleUrl.replace(/\/+$/, '')}/#proposal=${encodeURIComponent(row.proposal_id)}`;
  const target = `${chatText(request.target.type)} ${chatText(request.target.id)}`;
  const expires = new Date(row.expires_at).toISOString();
  const who = chatText(request.on_behalf_of?.name ?? request.principal);
  const text =
    event === 'approval.requested'
      ? `Approval needed (${request.approver_role}): ${request.tool} on ${target}, tenant ${request.tenant}, for ${who}; expires ${expires}. ${link}`
      : `${event.slice('approval.'.length)}: ${request.tool} on ${target}, tenant ${request.tenant}${row.decided_by === null || row.decided_by === 'gatehouse' ? '' : ` by ${row.decided_by}`}. ${link}`;
  const data = {
    proposal_id: row.proposal_id,
    tenant: request.tenant,
    environment: request.environment,
    tool: request.tool,
    target: { type: request.target.type, id: request.target.id },
    approver_role: request.approver_role,
    expires_at: expires,
    requested_at: new Date(request.requested_at).toISOString(),
    principal: request.principal,
    on_behalf_of: request.on_behalf_of ?? null,
    arguments_sha256: request.arguments_sha256,
    state: row.state,
    decided_by: row.decided_by,
    decided_at: row.decided_at === null ? null : new Date(row.decided_at).toISOString(),
    console_url: link,
  };
  return { id: `${event}:${row.proposal_id}`, body: JSON.stringify({ type: event, timestamp: new Date(now).toISOString(), text, data }) };
}

/** The delay before attempt `attempt + 1` (doubling from `backoffMs`, at most 10 minutes). */
export function retryDelayMs(attempt: number, backoffMs: number): number {
  return Math.min(backoffMs * 2 ** Math.max(0, attempt - 1), 10 * 60_000);
}

interface DueRow {
  delivery_id: string;
  endpoint_id: string;
  body: string;
  attempts: number;
}

const CLAIM_LEASE_MS = 30_000;

/**
 * Notifications to approvers' tools, as Standard Webhooks (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`), from an outbox in PostgreSQL: enqueued once per event and endpoint (the id
 * is the event and the proposal, so an event enqueued twice is sent once), delivered at least once
 * with backoff by whichever instance claims it, and dead-lettered with a metric after its attempts.
 */
export class WebhookOutbox {
  constructor(
    private readonly pool: Pool,
    private readonly t: Tables,
    private readonly settings: WebhookSettings,
    private readonly consoleUrl: () => string,
    private readonly logger: Logger,
    private readonly metrics?: GatehouseMetrics,
  ) {}

  get enabled(): boolean {
    return this.settings.endpoints.length > 0;
  }

  /** Records the notification of `event` for every endpoint that wants it; a second call for the same event adds nothing. */
  async enqueue(row: StoredRequest, event: WebhookEvent): Promise<void> {
    const endpoints = this.settings.endpoints.filter(
      (e) => e.events.includes(event) && (e.tenants === null || e.tenants.includes(row.request.tenant)),
    );
    if (endpoints.length === 0) return;
    const { id, body } = notificationOf(row, event, this.consoleUrl());
    await this.pool.query(
      `INSERT INTO ${this.t.webhooks} (delivery_id, endpoint_id, event_type, body)
         SELECT $1, endpoint, $2, $3 FROM unnest($4::text[]) AS endpoint
       ON CONFLICT (delivery_id, endpoint_id) DO NOTHING`,
      [id, event, body, endpoints.map((e) => e.id)],
    );
  }

  /** Sends what is due (claimed for a lease, so instances share the work); resolves when this batch is done. */
  async deliverDue(limit = 50): Promise<number> {
    if (!this.enabled) return 0;
    const { rows } = await this.pool.query<DueRow>(
      `UPDATE ${this.t.webhooks} SET next_attempt_at = now() + make_interval(secs => $1 / 1000.0)
        WHERE (delivery_id, endpoint_id) IN (
          SELECT delivery_id, endpoint_id FROM ${this.t.webhooks}
           WHERE state = 'pending' AND next_attempt_at <= now()
           ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING delivery_id, endpoint_id, body, attempts`,
      [CLAIM_LEASE_MS, limit],
    );
    await Promise.all(rows.map((row) => this.deliver(row)));
    return rows.length;
  }

  private async deliver(row: DueRow): Promise<void> {
    const endpoint = this.settings.endpoints.find((e) => e.id === row.endpoint_id);
    if (endpoint === undefined) {
      // An endpoint removed from the configuration: nothing will ever deliver it.
      await this.settle(row, 'dead', 'the endpoint is no longer configured');
      return;
    }
    const attempt = row.attempts + 1;
    const sentAt = new Date();
    let failure: string | undefined;
    try {
      const response = await fetch(endpoint.url, {
        method: 'POST',
        redirect: 'error',
        signal: AbortSignal.timeout(this.settings.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'gatehouse-approval',
          'webhook-id': row.delivery_id,
          'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
          'webhook-signature': new Webhook(endpoint.secret).sign(row.delivery_id, sentAt, row.body),
        },
        body: row.body,
      });
      await response.body?.cancel();
      if (response.status < 200 || response.status >= 300) failure = `HTTP ${response.status}`;
    } catch (error) {
      failure = error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : String(error);
    }
    if (failure === undefined) {
      await this.settle(row, 'delivered', null, attempt);
      this.metrics?.webhookDelivery('delivered');
      return;
    }
    if (attempt >= this.settings.attempts) {
      await this.settle(row, 'dead', failure, attempt);
      this.metrics?.webhookDelivery('dead');
      this.logger.error(
        { webhook_id: row.delivery_id, endpoint: endpoint.id, attempts: attempt, failure },
        'webhook dead-lettered after its attempts',
      );
      return;
    }
    await this.pool.query(
      `UPDATE ${this.t.webhooks} SET attempts = $3, last_error = $4, next_attempt_at = now() + make_interval(secs => $5 / 1000.0)
        WHERE delivery_id = $1 AND endpoint_id = $2 AND state = 'pending'`,
      [row.delivery_id, row.endpoint_id, attempt, failure, retryDelayMs(attempt, this.settings.backoffMs)],
    );
    this.metrics?.webhookDelivery('retried');
    this.logger.warn({ webhook_id: row.delivery_id, endpoint: endpoint.id, attempt, failure }, 'webhook delivery failed; retrying');
  }

  private async settle(row: DueRow, state: 'delivered' | 'dead', failure: string | null, attempts = row.attempts): Promise<void> {
    await this.pool.query(
      `UPDATE ${this.t.webhooks} SET state = $3, attempts = $4, last_error = $5, delivered_at = CASE WHEN $3 = 'delivered' THEN now() END
        WHERE delivery_id = $1 AND endpoint_id = $2`,
      [row.delivery_id, row.endpoint_id, state, attempts, failure],
    );
  }
}

export interface RunningDispatcher {
  stop(): Promise<void>;
}

/** Delivers due notifications every `intervalMs`, one batch at a time, until stopped. */
export function startWebhookDispatcher(outbox: WebhookOutbox, intervalMs: number, logger: Logger): RunningDispatcher {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running !== undefined) return;
    running = outbox
      .deliverDue()
      .then(() => undefined)
      .catch((error: unknown) => logger.error({ err: error }, 'webhook dispatch failed; the next tick retries'))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
