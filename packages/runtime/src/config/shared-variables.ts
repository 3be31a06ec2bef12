import { readRedisUrl, REDIS_URL_DEFAULT } from '@gatehouse/state';
import { SERVICES } from './component.js';
import { integer, oneOf, signingKey, text, trustedKeys, url } from './value-kind.js';
import type { ValueKind } from './value-kind.js';
import { variable } from './variable.js';

/** REDIS_URL: one Redis server, or a Redis Cluster through its `cluster` parameter, read as @gatehouse/state reads it. */
function redisUrl(): ValueKind<string> {
  const base = url({ schemes: ['redis', 'rediss'] });
  return {
    describe: `${base.describe}; \`?cluster=host:port,…\` for a Redis Cluster`,
    parse: (raw) => {
      const parsed = base.parse(raw);
      if (!parsed.ok) return parsed;
      const reading = readRedisUrl(raw);
      return reading.ok ? parsed : { ok: false, reason: reading.reason };
    },
  };
}

/** Settings the services must agree on, so one value feeds every service that reads it. */
export const SHARED_VARIABLES = {
  REDIS_URL: variable(redisUrl(), {
    readers: SERVICES,
    default: REDIS_URL_DEFAULT,
    secret: true,
    doc: "Redis: runs, idempotency records, slots, proposals and approvals (may carry a password). With a `cluster` parameter, a Redis Cluster: the URL's host and the listed nodes are its seeds, its user, password and scheme apply to every node (`redis://:pw@10.0.0.1:6379?cluster=10.0.0.2:6379,10.0.0.3:6379`)",
  }),
  GATEHOUSE_REDIS_WAIT_REPLICAS: variable(integer(0, 16), {
    readers: ['policy', 'executor'],
    default: '0',
    doc: "how many replicas of a Redis master must hold a write-key claim, a staged answer or decision, or an operator's resolution before Gatehouse acts on it (Redis `WAIT`); `0` waits for none. Redis replicates asynchronously, so without it a failover can lose a record the master acknowledged and a retry can run a write, or answer a command, a second time. Set it to `1` when every master has a replica",
  }),
  GATEHOUSE_REDIS_WAIT_TIMEOUT_MS: variable(integer(1, 60_000), {
    readers: ['policy', 'executor'],
    default: '250',
    doc: 'how long one of those writes waits for its replicas; past it the step fails as retryable, before anything is published or run',
  }),
  GATEHOUSE_TOOL_PACK: variable(text(), {
    readers: [...SERVICES, 'cli'],
    unset: '*(required to start a service)*',
    doc: "the tool pack the services host: a package name (`@acme/billing-tools`) or a path to a pack's package or module; `#name` picks one of several exports",
  }),
  GATEHOUSE_SIGNING_KEY: variable(signingKey(), {
    readers: ['policy', 'approval', 'executor'],
    required:
      'every order, approval request, decision and result a service publishes is signed with its own key (`node scripts/signing-key.mjs <key id>` makes a pair)',
    secret: true,
    doc: 'the Ed25519 key this service signs what it publishes with, under a key id; one key per service role, never shared between roles',
  }),
  GATEHOUSE_POLICY_KEYS: variable(trustedKeys(), {
    readers: ['executor', 'approval', 'mcp', 'cli', 'client'],
    requiredFor: ['executor', 'approval', 'mcp', 'cli', 'client'],
    required: 'orders, approval requests and refusals count only when a policy service key signed them',
    doc: "the policy service's public keys: its orders (executor), its approval requests (approval service) and its answers (client, MCP front door, `trace record`); list the old and the new key while rotating",
  }),
  GATEHOUSE_APPROVAL_KEYS: variable(trustedKeys(), {
    readers: ['executor', 'approval', 'mcp', 'cli', 'client'],
    requiredFor: ['executor', 'mcp', 'cli', 'client'],
    required: 'the orders of approved writes, decisions, rejections and expiries count only when an approval service key signed them',
    doc: "the approval service's public keys: its orders (executor), its decisions (`trace record`) and its answers (client, MCP front door); where optional, a reader that has them names what they signed out of turn `wrong_role`",
  }),
  GATEHOUSE_EXECUTOR_KEYS: variable(trustedKeys(), {
    readers: ['executor', 'approval', 'mcp', 'cli', 'client'],
    requiredFor: ['mcp', 'cli', 'client'],
    required: "an executor's answer reaches an agent only when an executor key signed it",
    doc: "the executors' public keys: their answers (client, MCP front door, `trace record`); where optional, a reader that has them names what they signed out of turn `wrong_role`",
  }),
  GATEHOUSE_MCP_KEYS: variable(trustedKeys(), {
    readers: ['policy'],
    unset: 'no MCP front door proves commands: the commands of an MCP client are dead-lettered',
    doc: "the MCP front doors' public keys (the public halves of their `MCP_SIGNING_KEY`): a command a front door proved speaks for the run it names, as one proved with the run's own key does; list the old and the new key while rotating",
  }),
  GATEHOUSE_REDIS_PREFIX: variable(text({ pattern: { regex: /^[^{}]*$/, says: 'text without braces' } }), {
    readers: SERVICES,
    default: 'gh:',
    doc: 'prefix of every Redis key, without `{` or `}` (they would move keys a script uses together into different Redis Cluster slots); empty means the default, so every service uses the same keys',
  }),
  GATEHOUSE_LEDGER_HISTORY: variable(text(), {
    readers: ['policy', 'executor'],
    unset: 'no history is kept',
    doc: 'a file every step this process takes in the claim ledger is appended to, one JSON line each (the entry, the operation, the owner, the script’s reply, the entry’s version): the history the fault tests check against the protocol model; one append per step, so for tests and audits, not for production load',
  }),
  GATEHOUSE_PROPOSAL_TTL_MS: variable(integer(1), {
    readers: ['policy', 'executor'],
    default: String(15 * 60 * 1000),
    defaultText: '`900000` (15 minutes)',
    doc: "how long a write's proposal stays valid, whether the executor or the policy service drafts it; it also caps an approval request's life",
  }),
  LOG_LEVEL: variable(oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), {
    readers: [...SERVICES, 'provision', 'cli'],
    default: 'info',
    defaultText: '`info` (the CLI: `silent`)',
    doc: 'least severe level logged (read by @gatehouse/telemetry when a logger is made)',
  }),
};
