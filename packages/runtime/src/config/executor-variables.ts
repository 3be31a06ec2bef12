import { integer, jsonIntegerMap, port, sealingKeys, signingKey, text, trustedKeys, unsealingKeys } from './value-kind.js';
import { variable } from './variable.js';

/** Writes a tenant, and one run, run at once across every executor, unless configured otherwise. */
export const SLOT_DEFAULTS = { tenant: 8, run: 4 } as const;

/** The executor: its identity, its consumer group, its concurrency and the write slots. */
export const EXECUTOR_VARIABLES = {
  EXECUTOR_ID: variable(text(), {
    readers: ['executor'],
    unset: '`<hostname>-<pid>`',
    doc: "this executor's name in leases, results and logs",
  }),
  EXECUTOR_GROUP_ID: variable(text(), {
    readers: ['executor'],
    unset: '`<GATEHOUSE_TOPIC_PREFIX>gatehouse-executor`',
    doc: 'consumer group on `gatehouse.execute` (KEDA scales on its lag)',
  }),
  EXECUTOR_CONCURRENCY: variable(integer(1), { readers: ['executor'], default: '64', doc: 'records in flight per process' }),
  EXECUTOR_TENANT_CONCURRENCY: variable(integer(1), {
    readers: ['executor'],
    default: '8',
    doc: 'records in flight per process and tenant',
  }),
  EXECUTOR_LEASE_MS: variable(integer(1), { readers: ['executor'], default: '5000', doc: "how soon a dead executor's work is taken over" }),
  EXECUTOR_SESSION_TIMEOUT_MS: variable(integer(1), {
    readers: ['executor'],
    default: '10000',
    doc: "how soon a dead executor's partitions move to the others",
  }),
  GATEHOUSE_TENANT_SLOTS: variable(integer(1), {
    readers: ['executor'],
    default: String(SLOT_DEFAULTS.tenant),
    doc: 'writes a tenant runs at once, across every executor (slots live in Redis)',
  }),
  GATEHOUSE_TENANT_SLOT_LIMITS: variable(jsonIntegerMap(1), {
    readers: ['executor'],
    default: '{}',
    doc: 'per-tenant overrides of `GATEHOUSE_TENANT_SLOTS`, e.g. `{"acme": 2}`',
  }),
  GATEHOUSE_RUN_SLOTS: variable(integer(1), {
    readers: ['executor'],
    default: String(SLOT_DEFAULTS.run),
    doc: 'writes one run runs at once, across every executor',
  }),
  EXECUTOR_HOST: variable(text(), {
    readers: ['executor'],
    default: '127.0.0.1',
    doc: 'listen address of `/metrics`, `/healthz`, `/readyz`',
  }),
  EXECUTOR_PORT: variable(port(), {
    readers: ['executor'],
    default: '8092',
    doc: 'listen port of `/metrics`, `/healthz`, `/readyz` and `/.well-known/jwks.json`',
  }),
  GATEHOUSE_ASSERTION_KEY: variable(signingKey(), {
    readers: ['executor'],
    required:
      'every request a handler makes to its system of record carries a call assertion signed with it (`node scripts/signing-key.mjs <key id>` makes a pair)',
    secret: true,
    doc: 'the Ed25519 key this executor signs call assertions with (EdDSA JWTs), under a key id its JWKS names; a key of its own, not the one it signs events with',
  }),
  GATEHOUSE_ASSERTION_KEYS: variable(trustedKeys(), {
    readers: ['executor', 'cli'],
    unset: '*(its own key only)*',
    doc: "call-assertion public keys published in the executors' JWKS besides the executor's own: the other executors' keys, and the old and the new key while rotating (`gatehouse keys jwks` writes the set as a file)",
  }),
  GATEHOUSE_ASSERTION_ISSUER: variable(text(), {
    readers: ['executor'],
    default: 'urn:gatehouse',
    doc: "`iss` of the call assertions: the deployment's name, which its systems of record check",
  }),
  GATEHOUSE_EXCHANGE_CLIENT_ID: variable(text(), {
    readers: ['executor', 'policy', 'mcp'],
    unset: 'off: a tool whose credential is `{ exchange }` cannot be hosted, and runs keep no token of their person',
    doc: "the executors' client at the OpenID Provider (`GATEHOUSE_OIDC_ISSUER`) for token exchange (RFC 8693): a person's token names it in `aud` to be exchanged for a system of record's token; the policy service and the MCP front door keep such tokens for their runs",
  }),
  GATEHOUSE_EXCHANGE_CLIENT_SECRET: variable(text(), {
    readers: ['executor'],
    secret: true,
    unset: 'required with `GATEHOUSE_EXCHANGE_CLIENT_ID`',
    doc: "the executors' client secret at the OpenID Provider, for token exchange",
  }),
  GATEHOUSE_SEALING_KEYS: variable(sealingKeys(), {
    readers: ['executor', 'policy', 'mcp'],
    unset: 'required with `GATEHOUSE_EXCHANGE_CLIENT_ID` (the MCP front door: with `MCP_AGENT_POLICY_FILE` too)',
    doc: "the executors' public sealing keys, the same list for every reader: a person's token kept in Redis for token exchange (their access token, and the refresh tokens exchanges leave) is stored only as a JWE to every key listed (ECDH-ES+A256KW, A256GCM), bound to its run, so only an executor can open it (`node scripts/sealing-key.mjs <key id>` makes a pair); list the old and the new key while rotating",
  }),
  GATEHOUSE_UNSEALING_KEYS: variable(unsealingKeys(), {
    readers: ['executor'],
    secret: true,
    unset: 'required with `GATEHOUSE_EXCHANGE_CLIENT_ID`',
    doc: "this executor's private sealing keys, at least one of them listed in `GATEHOUSE_SEALING_KEYS`: a sealed token opens with the key its recipient's key id names. Keep a key dropped from that list here until the longest-lived token sealed to it has lapsed (a refresh token lives as long as the person's session at the IdP); a token no key here opens counts as none (`CREDENTIAL_REFUSED`)",
  }),
};
