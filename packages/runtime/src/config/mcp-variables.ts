import { integer, port, signingKey, text, url } from './value-kind.js';
import { variable } from './variable.js';

/** The MCP front door: where it listens, whom it answers, how long a call may wait. */
export const MCP_VARIABLES = {
  MCP_HOST: variable(text(), { readers: ['mcp'], default: '127.0.0.1', doc: 'listen address of the MCP endpoint (`/mcp`)' }),
  MCP_PORT: variable(port(), { readers: ['mcp'], default: '8095', doc: 'listen port of the MCP endpoint' }),
  MCP_PUBLIC_URL: variable(url({ schemes: ['http', 'https'], trimTrailingSlash: true }), {
    readers: ['mcp'],
    unset: '`http://<MCP_HOST>:<MCP_PORT>`',
    doc: 'the base URL clients reach the front door at (behind a load balancer); named in `WWW-Authenticate` and the resource metadata',
  }),
  MCP_ALLOWED_HOSTS: variable(text(), {
    readers: ['mcp'],
    unset: 'the host of MCP_PUBLIC_URL, and `localhost`, `127.0.0.1`, `[::1]` at MCP_PORT',
    doc: 'comma-separated `Host` headers the endpoint answers (any other is refused with 403: DNS rebinding)',
  }),
  MCP_ALLOWED_ORIGINS: variable(text(), {
    readers: ['mcp'],
    unset: 'the origins of the allowed hosts (`http://` and `https://`)',
    doc: 'comma-separated `Origin` headers a browser-based client may send (a request with any other is refused with 403)',
  }),
  MCP_WAIT_MS: variable(integer(1_000, 600_000), {
    readers: ['mcp'],
    default: '45000',
    defaultText: '`45000` (below the usual 60 s client timeout)',
    doc: 'longest a `tools/call` request waits: a commit still waiting for a person is then answered `pending_approval`, anything else `TIMEOUT`',
  }),
  MCP_PROGRESS_MS: variable(integer(100, 60_000), {
    readers: ['mcp'],
    default: '5000',
    doc: 'how often a call waiting for a person sends a progress notification (to a client that sent a progress token)',
  }),
  MCP_TASK_TTL_MS: variable(integer(60_000), {
    readers: ['mcp'],
    default: String(24 * 3600 * 1000),
    defaultText: '`86400000` (24 hours)',
    doc: 'how long an MCP task and its result are kept (tasks are stored in Redis, scoped to their run)',
  }),
  MCP_AGENT_POLICY_FILE: variable(text(), {
    readers: ['mcp'],
    unset: 'people cannot sign in through their MCP client; only run tokens are taken',
    doc: "the agent policy (JSON): which people, by their claims at `GATEHOUSE_OIDC_ISSUER`, an MCP client may act for, in which role, tenant and for how long. Needs `GATEHOUSE_OIDC_ISSUER` and `MCP_PUBLIC_URL` (the tokens' audience is `<MCP_PUBLIC_URL>/mcp`)",
  }),
  MCP_OIDC_SCOPE: variable(text(), {
    readers: ['mcp'],
    default: 'gatehouse.mcp',
    doc: 'the scope an MCP client asks the identity provider for, named in `WWW-Authenticate` and the resource metadata',
  }),
  MCP_TASK_LEASE_MS: variable(integer(1_000), {
    readers: ['mcp'],
    default: '15000',
    defaultText: '`15000` (15 s)',
    doc: 'how long a task stays with the instance waiting for its result once that instance stops renewing it; then the next `tasks/get` on any instance takes the task over',
  }),
  MCP_LIST_TTL_MS: variable(integer(0), {
    readers: ['mcp'],
    default: '300000',
    defaultText: '`300000` (5 minutes)',
    doc: "the longest `ttlMs` a 2026-07-28 `tools/list` answer carries (never past the run's end): the run's tools change only with the pack and the run, so this bounds how long a new deployment's tools take to be seen",
  }),
  MCP_SIGNING_KEY: variable(signingKey(), {
    readers: ['mcp'],
    unset: '*(required for the HTTP endpoint)*',
    secret: true,
    doc: "the Ed25519 key, under a key id, the HTTP endpoint proves its clients' commands with, for the runs whose tokens or sign-ins it is shown (`node scripts/signing-key.mjs <key id>` makes a pair); the policy service lists its public half in `GATEHOUSE_MCP_KEYS`. Never another service's key",
  }),
  GATEHOUSE_RUN_KEY: variable(text({ minLength: 16 }), {
    readers: ['mcp'],
    unset: '*(required with `--stdio`)*',
    secret: true,
    doc: 'the run key the stdio transport proves its commands with: the `run_key` its run was registered with (`gatehouse runs create --mcp-token` prints both)',
  }),
  GATEHOUSE_MCP_TOKEN: variable(text({ minLength: 16 }), {
    readers: ['mcp'],
    unset: '*(required with `--stdio`)*',
    secret: true,
    doc: 'the run token the stdio transport acts with (`gatehouse runs create --mcp-token`); the HTTP endpoint takes a token per request instead',
  }),
};
