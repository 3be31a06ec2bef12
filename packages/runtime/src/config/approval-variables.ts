import { integer, port, text, url } from './value-kind.js';
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
  GATEHOUSE_APPROVERS_FILE: variable(text(), {
    readers: ['approval'],
    unset: 'the tool pack\'s',
    doc: 'approvers: identities, token hashes, roles and tenants (replaces the tool pack\'s own)',
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
