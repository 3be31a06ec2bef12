import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { generateKeyPair, SignJWT } from 'jose';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRoles } from '@gatehouse/governance';
import { AccessTokenVerifier } from '@gatehouse/identity';
import { AgentPolicy, liveRoleTools } from '@gatehouse/mcp';
import type { RunningMcpService } from '@gatehouse/mcp';
import { DelegationStore, RunRegistry } from '@gatehouse/state';
import { CONTROL_TOKEN, startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { EXECUTOR_CLIENT, ISSUER, PEOPLE, tokensOf } from './support/identity.js';
import { connectHttp, dataOf, signInRunOf, startFrontDoor } from './support/mcp.js';
import type { McpResult, RunWithToken } from './support/mcp.js';
import { ENVELOPE_REVISION } from './support/mcp-envelope.js';
import { pollUntil } from './support/poll.js';
import { REFERENCE_ROLES_FILE } from './support/reference-pack.js';
import { TEST_FRONT_DOOR_KEY, TEST_SEALER, TEST_UNSEALER } from './support/signing.js';

// The realm's gatehouse.mcp scope names this front door's resource URL as the tokens' audience.
const PORT = 18095;
const BASE = `http://127.0.0.1:${PORT}`;
const RESOURCE = `${BASE}/mcp`;
const AGENT_POLICY = fileURLToPath(new URL('../examples/customer-support/pack/config/agent-policy.json', import.meta.url));
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** An MCP client's OAuth state, kept in memory as a desktop client keeps it on disk. */
class MemoryOAuthProvider implements OAuthClientProvider {
  client: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier = '';
  discovered: OAuthDiscoveryState | undefined;
  authorizationUrl: URL | undefined;

  constructor(readonly redirectUrl: string) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Gatehouse sign-in test client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'gatehouse.mcp',
    };
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.client;
  }
  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.client = info;
  }
  tokens(): StoredOAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
  // Kept with the code verifier, so the callback is checked against the server the flow began at.
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovered = state;
  }
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovered;
  }
}

/** The redirect URI an MCP client listens on for the IdP's answer; resolves with its query. */
async function callbackListener(): Promise<{ url: string; next: () => Promise<URLSearchParams>; close: () => Promise<void> }> {
  let deliver: (params: URLSearchParams) => void = () => undefined;
  let waiting = new Promise<URLSearchParams>((resolve) => (deliver = resolve));
  const server: Server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('Signed in; you may close this window.');
    deliver(new URL(req.url ?? '/', 'http://127.0.0.1').searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next: async () => {
      const params = await waiting;
      waiting = new Promise<URLSearchParams>((resolve) => (deliver = resolve));
      return params;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** When a JWT expires, in ms. */
const expiryOf = (jwt: string): number =>
  (JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp: number }).exp * 1000;

const rpc = (token: string | undefined, method = 'tools/list'): Promise<Response> =>
  fetch(RESOURCE, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': ENVELOPE_REVISION,
      'mcp-method': method,
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': ENVELOPE_REVISION,
          'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });

describe('MCP clients that sign their person in: the front door as an OAuth resource server', () => {
  let g: Gatehouse;
  let door: RunningMcpService;
  let browser: Browser;
  let callback: Awaited<ReturnType<typeof callbackListener>>;
  const clients: Client[] = [];

  beforeAll(async () => {
    g = await startGatehouse('mcpsignin');
    const roles = loadRoles(REFERENCE_ROLES_FILE, g.catalog);
    // Clock tolerance 0, so a real 1-second token is refused as expired as soon as it lapses.
    const verifier = await AccessTokenVerifier.discover({ issuer: ISSUER, audience: RESOURCE, clockToleranceS: 0 });
    door = await startFrontDoor(g, {
      transport: { kind: 'http', host: '127.0.0.1', port: PORT, publicUrl: BASE, signingKey: TEST_FRONT_DOOR_KEY },
      people: {
        verifier,
        policy: AgentPolicy.load(AGENT_POLICY, liveRoleTools(roles, g.catalog), 24 * 3600 * 1000),
        scope: 'gatehouse.mcp',
        delegation: { clientId: EXECUTOR_CLIENT.id, sealer: TEST_SEALER },
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    callback = await callbackListener();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await callback?.close();
    await browser?.close();
    await door?.stop();
    await g?.stop();
  });

  it('names the identity provider in its resource metadata and in the challenge to a client without a token', async () => {
    const metadata = (await (await fetch(`${BASE}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      resource: RESOURCE,
      authorization_servers: [ISSUER],
      scopes_supported: ['gatehouse.mcp'],
      bearer_methods_supported: ['header'],
    });
    const none = await rpc(undefined);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe(
      `Bearer realm="gatehouse", resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp", scope="gatehouse.mcp"`,
    );
  });

  it("signs a person in through the SDK client's OAuth flow against Keycloak, then serves that person's run only", async () => {
    const provider = new MemoryOAuthProvider(callback.url);
    const connect = async (): Promise<Client> => {
      const client = new Client({ name: 'sign-in-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: ENVELOPE_REVISION } } });
      clients.push(client);
      const transport = new StreamableHTTPClientTransport(new URL(RESOURCE), { authProvider: provider });
      try {
        await client.connect(transport);
        return client;
      } catch (error) {
        if (!(error instanceof UnauthorizedError)) throw error;
      }
      // The client registered itself (dynamic registration) and sent the person to the IdP.
      expect(provider.client?.client_id).toMatch(/^[0-9a-f-]{36}$/);
      const authorization = provider.authorizationUrl;
      if (authorization === undefined) throw new Error('the client never asked the person to sign in');
      expect(authorization.href.startsWith(`${ISSUER}/protocol/openid-connect/auth`)).toBe(true);
      expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorization.searchParams.get('resource')).toBe(RESOURCE);
      const page = await browser.newPage();
      try {
        await page.goto(authorization.href);
        await page.locator('#username').fill(PEOPLE.owner.username);
        await page.locator('#password').fill(PEOPLE.owner.password);
        const answered = callback.next();
        await page.locator('#kc-login').click();
        // Dynamically registered clients need the person's consent.
        await page.locator('[name="accept"]').click();
        await transport.finishAuth(await answered);
      } finally {
        await page.close();
      }
      const again = new Client({ name: 'sign-in-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: ENVELOPE_REVISION } } });
      clients.push(again);
      await again.connect(new StreamableHTTPClientTransport(new URL(RESOURCE), { authProvider: provider }));
      return again;
    };
    const client = await connect();
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(tools).toContain('commit_address_change_v2');
    expect(tools).not.toContain('start_customer_export_v1');
    const read = (await client.callTool({ name: 'get_customer_v1', arguments: { customer_id: 'C-1842' } })) as McpResult;
    expect(dataOf(read)).toMatchObject({ customer_id: 'C-1842' });
    // The run is the person's: on_behalf_of names them, by the email their token carries (what
    // approvers are shown as "on behalf of"); registered by the front door.
    const { runId, run } = await signInRunOf(g);
    expect(run).toMatchObject({
      tenant: 'acme',
      role: 'support-agent',
      on_behalf_of: { issuer: ISSUER, subject: PEOPLE.owner.subject, name: 'owner@acme.example' },
      registered_by: { client_id: 'gatehouse-mcp' },
    });
    // A 2025-11-25 client with the same person's token reaches the same run.
    const token = provider.saved?.access_token ?? '';
    // The person's token names the executors' client: it is kept for the run, for token exchange,
    // sealed so that only an executor opens it.
    expect(await g.redis.get(g.keys.subjectToken(runId))).not.toContain(token.split('.')[1]);
    expect(await new DelegationStore(g.redis, g.keys, TEST_UNSEALER).subjectToken(runId)).toBe(token);
    const handshake = await connectHttp(RESOURCE, { mcp_token: token } as RunWithToken);
    expect((await handshake.listTools()).tools.map((t) => t.name).sort()).toEqual(tools);
    await handshake.close();
    // The run lives no longer than the session's tokens: it expires with the token it came with, and
    // a newer token of the same session (the client refreshing it) moves that later.
    expect(run?.expires_at).toBe(expiryOf(token));
    const newer = await pollUntil(
      async () => {
        const answer = await fetch(`${ISSUER}/protocol/openid-connect/token`, {
          method: 'POST',
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: provider.saved?.refresh_token ?? '',
            client_id: provider.client?.client_id ?? '',
          }),
        });
        const access = ((await answer.json()) as { access_token?: string }).access_token;
        return access !== undefined && expiryOf(access) > expiryOf(token) ? access : undefined;
      },
      10_000,
      'a newer token of the same session',
    );
    expect((await rpc(newer)).status).toBe(200);
    expect((await new RunRegistry(g.redis, g.keys).get(runId))?.expires_at).toBe(expiryOf(newer));
    // Stopping the run ends what any token of that sign-in may do.
    const stopped = await fetch(`${g.policies[0]?.url ?? ''}/runs/${run?.run_id ?? ''}/stop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    });
    expect(stopped.status).toBe(200);
    const after = await rpc(token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('refuses a token of another issuer, for another audience, expired or forged with 401, and a person the policy maps to nothing with 403', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const real = (await tokensOf(PEOPLE.owner, 'gatehouse-test', 'openid gatehouse.mcp')).access_token;
    const { kid } = JSON.parse(Buffer.from(real.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid: string };
    const forge = (iss: string): Promise<string> =>
      new SignJWT({ sub: PEOPLE.owner.subject, groups: ['agent-owners'], tenant: ['acme'] })
        .setProtectedHeader({ alg: 'RS256', kid })
        .setIssuer(iss)
        .setAudience(RESOURCE)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
    const short = (await tokensOf(PEOPLE.owner, 'gatehouse-test-short', 'openid gatehouse.mcp')).access_token;
    const refusal = async (token: string): Promise<[number, string | null]> => {
      const response = await rpc(token);
      return [response.status, response.headers.get('www-authenticate')];
    };
    const refused = {
      issuer: await refusal(await forge('http://127.0.0.1:18080/realms/evil')),
      forged: await refusal(await forge(ISSUER)),
      // Meant for the approval API only: no gatehouse.mcp scope, so not this resource's audience.
      audience: await refusal((await tokensOf(PEOPLE.owner)).access_token),
      expired: await pollUntil(
        async () => {
          const answer = await refusal(short);
          // The run of this sign-in ends at the token's expiry too: a request verified just before
          // that instant and checked against its run just after is refused as RUN_INACTIVE. The
          // next one is past the token's own expiry.
          return answer[0] === 401 && !/the run of this sign-in has ended/.test(answer[1] ?? '') ? answer : undefined;
        },
        10_000,
        'the 1-second token to lapse',
      ),
      nobody: await refusal((await tokensOf(PEOPLE.viewer, 'gatehouse-test', 'openid gatehouse.mcp')).access_token),
    };
    expect(refused.issuer[0]).toBe(401);
    expect(refused.issuer[1]).toMatch(/error="invalid_token", error_description="issued by http:\/\/127\.0\.0\.1:18080\/realms\/evil/);
    expect(refused.forged[0]).toBe(401);
    expect(refused.audience[0]).toBe(401);
    expect(refused.audience[1]).toMatch(/error="invalid_token"/);
    expect(refused.expired[1]).toMatch(/error="invalid_token", error_description="[^"]*exp/);
    expect(refused.nobody[0]).toBe(403);
    expect(refused.nobody[1]).toMatch(
      /resource_metadata="[^"]+", scope="gatehouse.mcp", error="insufficient_scope", error_description="viewer@acme\.example's claims match no rule of the agent policy"/,
    );
    // The real token of an agent owner, for this resource, is taken.
    expect((await rpc(real)).status).toBe(200);
    const metrics = await (await fetch(`${BASE}/metrics`)).text();
    for (const code of [
      'TOKEN_ISSUER_UNKNOWN',
      'TOKEN_SIGNATURE_INVALID',
      'TOKEN_AUDIENCE_MISMATCH',
      'TOKEN_EXPIRED',
      'NOT_AN_AGENT_OWNER',
    ]) {
      expect(metrics).toMatch(new RegExp(`gatehouse_identity_refusals_total\\{surface="mcp",code="${code}"\\} [1-9]`));
    }
  });
});
