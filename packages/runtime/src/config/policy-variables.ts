import { integer, port, text } from './value-kind.js';
import { variable } from './variable.js';

/** The policy service: its control API, its files and its consumer group. */
export const POLICY_VARIABLES = {
  GATEHOUSE_CONTROL_TOKEN: variable(text({ minLength: 16 }), {
    readers: ['policy', 'cli'],
    unset: 'off: trusted code proves itself to the IdP (`GATEHOUSE_OIDC_ISSUER`)',
    secret: true,
    doc: 'a static bearer token of the control API (runs, operations), for local development only; off in `deploy/`. At least 16 characters',
  }),
  POLICY_OIDC_AUDIENCE: variable(text(), {
    readers: ['policy'],
    default: 'gatehouse-policy',
    doc: 'the audience (`aud`) a client-credentials token of trusted code must name to reach the control API',
  }),
  POLICY_RUNS_SCOPE: variable(text(), {
    readers: ['policy'],
    default: 'gatehouse.runs',
    doc: "the scope a trusted caller's token must carry to register and manage runs",
  }),
  POLICY_OPERATOR_AUDIENCE: variable(text(), {
    readers: ['policy'],
    default: 'gatehouse-approval',
    doc: "the audience (`aud`) a person's access token must name to look up and resolve operations: by default the one people's tokens for the approval API carry (`gatehouse operations sign-in`); an IdP that can, gives operators an audience of their own",
  }),
  POLICY_OPERATOR_ROLE: variable(text(), {
    readers: ['policy'],
    default: 'ops-admin',
    doc: 'the role of the approver policy (`GATEHOUSE_APPROVER_POLICY_FILE`) that makes a person an operator: only they look up and resolve operations, of the tenants their claims give them',
  }),
  POLICY_HOST: variable(text(), { readers: ['policy'], default: '127.0.0.1', doc: 'listen address of the control API' }),
  POLICY_PORT: variable(port(), { readers: ['policy'], default: '8091', doc: 'listen port of the control API' }),
  GATEHOUSE_ROLES_FILE: variable(text(), {
    readers: ['policy', 'cli'],
    unset: "the tool pack's",
    doc: "roles: which tools the runs of each role may call (replaces the tool pack's own)",
  }),
  GATEHOUSE_POLICY_TABLE_FILE: variable(text(), {
    readers: ['policy', 'cli'],
    unset: "the tool pack's",
    doc: "the policy table: which writes need an approval, from whom, per environment (replaces the tool pack's own)",
  }),
  GATEHOUSE_MAX_ARGUMENT_BYTES: variable(integer(1), {
    readers: ['policy'],
    default: String(64 * 1024),
    doc: 'largest `arguments` text of a tool call, in UTF-8 bytes (`PAYLOAD_TOO_LARGE` otherwise, docs/errors.md)',
  }),
  GATEHOUSE_MAX_RUN_TTL_MS: variable(integer(1), {
    readers: ['policy', 'mcp'],
    default: String(24 * 3600 * 1000),
    defaultText: '`86400000` (24 hours)',
    doc: 'longest `ttl_ms` a run may be registered with (`TTL_TOO_LONG` otherwise, docs/errors.md)',
  }),
  POLICY_GROUP_ID: variable(text(), {
    readers: ['policy'],
    unset: '`<GATEHOUSE_TOPIC_PREFIX>gatehouse-policy`',
    doc: 'consumer group on `gatehouse.commands`',
  }),
  POLICY_CONCURRENCY: variable(integer(1), { readers: ['policy'], default: '64', doc: 'commands in flight per instance' }),
  POLICY_SESSION_TIMEOUT_MS: variable(integer(1), {
    readers: ['policy'],
    default: '10000',
    doc: "how soon a dead instance's partitions move to the others",
  }),
};
