import { integer, oneOf, port, text, url } from './value-kind.js';
import { variable } from './variable.js';

/** The approval service: its database, its API and console, its approvers and its timers. */
export const APPROVAL_VARIABLES = {
  DATABASE_URL: variable(url({ schemes: ['postgres', 'postgresql'] }), {
    readers: ['approval'],
    default: 'postgres://postgres@127.0.0.1:5432/gatehouse',
    secret: true,
    doc: "PostgreSQL of the approval service, created if missing (the reference domain's customers service reads it too)",
  }),
  APPROVALS_DB_SCHEMA: variable(text({ pattern: { regex: /^[a-z_][a-z0-9_]{0,62}$/, says: 'a plain lower-case schema name' } }), {
    readers: ['approval'],
    default: 'approvals',
    doc: 'PostgreSQL schema holding the approval tables (tests use one each)',
  }),
  APPROVAL_HOST: variable(text(), { readers: ['approval'], default: '127.0.0.1', doc: 'listen address of the approval API and console' }),
  APPROVAL_PORT: variable(port(), { readers: ['approval'], default: '8093', doc: 'listen port of the approval API and console' }),
  GATEHOUSE_OIDC_ISSUER: variable(url({ schemes: ['https', 'http'] }), {
    readers: ['approval', 'policy', 'cli', 'mcp', 'executor'],
    unset: 'no IdP: only demo approver tokens and the control token',
    doc: "the company's OpenID Provider, by discovery (`<issuer>/.well-known/openid-configuration`; plain HTTP on loopback only): approvers sign in there, trusted code gets its tokens there, runs name their person by it, and executors exchange that person's token there",
  }),
  GATEHOUSE_OIDC_CLIENT_ID: variable(text(), {
    readers: ['approval'],
    unset: 'no browser sign-in: bearer access tokens only',
    doc: "the console's client at the OpenID Provider (Authorization Code with PKCE; redirect URI `<APPROVAL_PUBLIC_URL>/auth/callback`)",
  }),
  GATEHOUSE_OIDC_CLIENT_SECRET: variable(text(), {
    readers: ['approval'],
    secret: true,
    unset: 'a public client (PKCE only)',
    doc: "the console client's secret",
  }),
  APPROVAL_OIDC_AUDIENCE: variable(text(), {
    readers: ['approval'],
    default: 'gatehouse-approval',
    doc: 'the audience (`aud`) a bearer access token must name to be taken by the approval API',
  }),
  APPROVAL_PUBLIC_URL: variable(url({ schemes: ['https', 'http'], trimTrailingSlash: true }), {
    readers: ['approval'],
    unset: '`http://<APPROVAL_HOST>:<APPROVAL_PORT>`',
    doc: 'the console as browsers reach it: its redirect URI, and HTTPS there makes the session cookie `Secure`',
  }),
  APPROVAL_SESSION_TTL_MS: variable(integer(60_000, 7 * 24 * 3600 * 1000), {
    readers: ['approval'],
    default: String(8 * 3600 * 1000),
    defaultText: '`28800000` (8 hours)',
    doc: "how long a console session lasts at most; the IdP is asked again before every decision, and before a read once the session's access token has lapsed",
  }),
  GATEHOUSE_APPROVER_POLICY_FILE: variable(text(), {
    readers: ['approval', 'policy'],
    unset: "the tool pack's",
    doc: "the approver policy: which claims (groups, roles, tenant) make a person an approver of which roles and tenants, and an operator (`POLICY_OPERATOR_ROLE`) of which tenants (replaces the tool pack's own)",
  }),
  GATEHOUSE_DEMO_APPROVERS: variable(oneOf(['on', 'off']), {
    readers: ['approval'],
    default: 'off',
    doc: 'the demo switch: `on` also takes the bearer tokens of the approvers file, whose demo tokens are published; every start says so loudly. Never in production',
  }),
  GATEHOUSE_APPROVERS_FILE: variable(text(), {
    readers: ['approval'],
    unset: "the tool pack's",
    doc: "demo approvers: identities, token hashes, roles and tenants, taken only with `GATEHOUSE_DEMO_APPROVERS=on` (replaces the tool pack's own)",
  }),
  APPROVAL_WEBHOOKS_FILE: variable(text(), {
    readers: ['approval'],
    unset: 'no webhooks',
    doc: "approvers' tools told of every request, decision, withdrawal and expiry (Standard Webhooks): `{ endpoints: [{ id, url, events?, tenants?, secret_env }] }`, each secret (`whsec_…`) in the variable its `secret_env` names",
  }),
  APPROVAL_WEBHOOK_ATTEMPTS: variable(integer(1, 100), {
    readers: ['approval'],
    default: '8',
    doc: 'tries of one webhook delivery before it is dead-lettered (counted in `gatehouse_webhook_deliveries_total{outcome="dead"}`)',
  }),
  APPROVAL_WEBHOOK_BACKOFF_MS: variable(integer(10, 600_000), {
    readers: ['approval'],
    default: '1000',
    doc: 'the first retry delay of a failed webhook delivery; each next one doubles, up to 10 minutes',
  }),
  APPROVAL_WEBHOOK_TIMEOUT_MS: variable(integer(100, 60_000), {
    readers: ['approval'],
    default: '5000',
    doc: 'how long one webhook delivery may take',
  }),
  APPROVAL_VALIDITY_MS: variable(integer(1_000, 24 * 3600 * 1000), {
    readers: ['approval'],
    default: String(10 * 60 * 1000),
    defaultText: '`600000` (10 minutes)',
    doc: "how long an approval may be used once given (never past the request's expiry)",
  }),
  APPROVAL_SWEEP_MS: variable(integer(10, 60_000), {
    readers: ['approval'],
    default: '1000',
    doc: 'how often lapsed requests are expired and unpublished decisions retried',
  }),
  APPROVAL_OUTBOX_RETRY_MS: variable(integer(100, 3_600_000), {
    readers: ['approval'],
    default: '10000',
    doc: 'how old an unconfirmed publish is before the outbox retries it',
  }),
  APPROVAL_GROUP_ID: variable(text(), {
    readers: ['approval'],
    unset: '`<GATEHOUSE_TOPIC_PREFIX>gatehouse-approval`',
    doc: 'consumer group on `gatehouse.approvals.requested`',
  }),
};
