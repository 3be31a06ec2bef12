import { randomUUID } from 'node:crypto';
import type { IHeaders } from 'kafkajs';
import pg from 'pg';
import type { Pool } from 'pg';
import { Approvers, startApprovalService, tablesIn, tokenSha256 } from '@gatehouse/approval';
import type { ApproverIdentity, RunningApprovalService, Tables, WebhookSettings } from '@gatehouse/approval';
import { canonicalArguments } from '@gatehouse/contracts';
import { EventPublisher, EventSigner } from '@gatehouse/events';
import type { ApprovalRequest, EventByRole, TopicRole } from '@gatehouse/events';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import { ApprovalStore, createRedis, Keyspace, redisUrlFromEnv } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { config, eventually, freshTopics, logger } from './stack.js';
import type { TestTopics } from './stack.js';
import { TEST_KEY_RING, TEST_SIGNING_KEYS } from './signing.js';

export const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/gatehouse';

/** Test approvers: the tokens live only in this file; the service sees their hashes. */
export const TOKENS = {
  lead: `test-lead-${randomUUID()}`,
  ops: `test-ops-${randomUUID()}`,
  viewer: `test-viewer-${randomUUID()}`,
  agentOwner: `test-owner-${randomUUID()}`,
  globexOnly: `test-globex-${randomUUID()}`,
} as const;

export const IDENTITIES = {
  lead: 'lead@acme.example',
  ops: 'ops@acme.example',
  viewer: 'viewer@acme.example',
  /** The principal the sample runs act for: an approver too, so self-approval can be tried. */
  agentOwner: 'owner@acme.example',
  globexOnly: 'lead@globex.example',
} as const;

export function testApprovers(): Approvers {
  const entry = (who: keyof typeof TOKENS, roles: string[], tenants: string[]) => ({
    identity: IDENTITIES[who],
    token_sha256: tokenSha256(TOKENS[who]),
    roles,
    tenants,
  });
  return Approvers.parse({
    approvers: [
      entry('lead', ['support-lead'], ['acme', 'globex']),
      entry('ops', ['ops-admin', 'support-lead'], ['acme', 'globex']),
      entry('viewer', [], ['acme']),
      entry('agentOwner', ['support-lead'], ['acme']),
      entry('globexOnly', ['support-lead'], ['globex']),
    ],
  });
}

/** An ApprovalRequest like the policy service publishes, with unique ids and canonical arguments. */
export function approvalRequest(overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  const now = Date.now();
  const id = randomUUID().slice(0, 8);
  const { canonical, sha256 } = canonicalArguments({ proposal_id: `p_${id}`, customer_id: 'C-1842', expected_version: 17 });
  return {
    schema_version: 1,
    proposal_id: `p_${id}`,
    command_id: `cmd-${randomUUID()}`,
    run_id: `run-${id}`,
    tenant: 'acme',
    principal: IDENTITIES.agentOwner,
    environment: 'production',
    tool: 'commit_address_change.v2',
    arguments: canonical,
    arguments_sha256: sha256,
    target: { type: 'customer', id: 'C-1842', version: 17 },
    effect: 'Replace the shipping address of customer C-1842',
    diff: {
      changes: [
        {
          field: 'shipping_address',
          before: '{"city":"Leeds","country":"GB","line1":"1 Old Road","postal_code":"LS1 1AA"}',
          after: '{"city":"York","country":"GB","line1":"2 New Street","postal_code":"YO1 7HH"}',
        },
      ],
      recipients: [],
      amount: null,
      affected_records: 1,
      irreversible: ['a confirmation email is sent to the customer'],
    },
    approver_role: 'support-lead',
    rule_id: 'address-change-needs-lead',
    requested_at: now,
    expires_at: now + 15 * 60_000,
    on_behalf_of: null,
    recent_sign_in_s: null,
    ...overrides,
  };
}

/** Every event of some topics, decoded, as they arrive. */
interface EventLog {
  readonly seen: { readonly [R in TopicRole]: EventByRole[R][] };
  /** The record headers an event arrived with (its signature, trace context). */
  headersOf(event: object): IHeaders | undefined;
  waitFor<R extends TopicRole>(role: R, match: (event: EventByRole[R]) => boolean, what?: string): Promise<EventByRole[R]>;
  stop(): Promise<void>;
}

interface Reply<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
}

export interface ApprovalHarness {
  readonly topics: TestTopics;
  readonly schema: string;
  readonly t: Tables;
  readonly db: Pool;
  readonly redis: Redis;
  readonly redisPrefix: string;
  readonly approvals: ApprovalStore;
  readonly events: EventLog;
  service: RunningApprovalService;
  readonly url: () => string;
  publish(request: ApprovalRequest): Promise<void>;
  /** Publishes a request and waits until the service has stored it. */
  submit(request: ApprovalRequest): Promise<void>;
  call<T = Record<string, unknown>>(method: string, path: string, token: string | null, body?: unknown): Promise<Reply<T>>;
  /** A call as a signed-in browser makes it: the session cookie, and the CSRF header when given. */
  callAs<T = Record<string, unknown>>(
    method: string,
    path: string,
    session: { readonly cookie: string; readonly csrf?: string },
    body?: unknown,
  ): Promise<Reply<T>>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function watch(topics: TestTopics, roles: readonly TopicRole[]): Promise<EventLog> {
  const seen = { commands: [], execute: [], results: [], approvalsRequested: [], approvalsDecided: [], operator: [] } as {
    [R in TopicRole]: EventByRole[R][];
  };
  const consumer = topics.kafka.consumer({ groupId: `watch-${randomUUID()}` });
  await consumer.connect();
  for (const role of roles) await consumer.subscribe({ topic: topics.topics[role], fromBeginning: true });
  const byTopic = new Map(roles.map((role) => [topics.topics[role], role]));
  const headers = new WeakMap<object, IHeaders | undefined>();
  await consumer.run({
    eachMessage: async ({ topic, message }) => {
      const role = byTopic.get(topic);
      if (role === undefined) return;
      const decoded = await topics.serde.decode(role, message.value);
      if (!decoded.ok) return;
      headers.set(decoded.value, message.headers);
      (seen[role] as unknown[]).push(decoded.value);
    },
  });
  return {
    seen,
    headersOf: (event) => headers.get(event),
    waitFor: (role, match, what = `an event on ${role}`) => eventually(() => seen[role].find(match), 20_000, what),
    stop: () => consumer.disconnect(),
  };
}

export async function startApprovalHarness(
  label: string,
  options: {
    sweepMs?: number;
    validityMs?: number;
    identity?: ApproverIdentity;
    tokens?: boolean;
    webhooks?: WebhookSettings;
    publicUrl?: string;
  } = {},
): Promise<ApprovalHarness> {
  const topics = await freshTopics(label);
  const schema = `t_apr_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const db = new pg.Pool({ connectionString: DATABASE_URL, max: 5 });
  const redis = createRedis(redisUrlFromEnv(), `test-${label}`);
  const redisPrefix = `t-${label}-${randomUUID().slice(0, 8)}:`;
  const approvers = testApprovers();
  const catalog = customerSupportCatalog();
  const start = () =>
    startApprovalService({
      events: config,
      topics: topics.topics,
      databaseUrl: DATABASE_URL,
      schema,
      redis,
      redisPrefix,
      ...(options.tokens === false ? {} : { approvers }),
      ...(options.identity === undefined ? {} : { identity: options.identity }),
      ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
      ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
      signingKey: TEST_SIGNING_KEYS.approval,
      trustedKeys: TEST_KEY_RING,
      catalog,
      logger,
      host: '127.0.0.1',
      port: 0,
      approvalValidityMs: options.validityMs ?? 10 * 60_000,
      sweepMs: options.sweepMs ?? 100,
      outboxRetryMs: 1_000,
      groupId: `gatehouse-approval-${label}-${randomUUID().slice(0, 8)}`,
      instanceId: label,
    });
  const service = await start();
  await service.joined;
  // Signed as the policy service signs its requests: the approval service shows people no other.
  const producer = await EventPublisher.connect(topics.kafka, topics.serde, new EventSigner(TEST_SIGNING_KEYS.policy));
  const events = await watch(topics, ['approvalsDecided', 'execute', 'results']);

  const harness: ApprovalHarness = {
    topics,
    schema,
    t: tablesIn(schema),
    db,
    redis,
    redisPrefix,
    approvals: new ApprovalStore(redis, new Keyspace(redisPrefix)),
    events,
    service,
    url: () => harness.service.url,
    publish: (request) => producer.publish('approvalsRequested', request.tenant, request),
    async submit(request) {
      await harness.publish(request);
      await waitUntil(async () => {
        const { rows } = await db.query<{ command_ids: string[] }>(`SELECT command_ids FROM ${harness.t.requests} WHERE proposal_id = $1`, [
          request.proposal_id,
        ]);
        return rows[0]?.command_ids.includes(request.command_id) === true ? true : undefined;
      }, `request ${request.proposal_id} stored`);
    },
    async call<T>(method: string, path: string, token: string | null, body?: unknown): Promise<Reply<T>> {
      const headers: Record<string, string> = {};
      if (token !== null) headers['authorization'] = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${harness.service.url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
    },
    async callAs<T>(
      method: string,
      path: string,
      session: { readonly cookie: string; readonly csrf?: string },
      body?: unknown,
    ): Promise<Reply<T>> {
      const headers: Record<string, string> = { cookie: session.cookie };
      if (session.csrf !== undefined) headers['x-csrf-token'] = session.csrf;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${harness.service.url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
    },
    async restart() {
      await harness.service.stop();
      harness.service = await start();
      await harness.service.joined;
    },
    async stop() {
      await harness.service.stop();
      await events.stop();
      await producer.disconnect();
      await db.query(`DROP SCHEMA IF EXISTS ${harness.t.schema} CASCADE`);
      await db.end();
      await redis.quit();
    },
  };
  return harness;
}

/** Polls an async check until it returns a value (bounded); no fixed sleeps. */
export async function waitUntil<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
