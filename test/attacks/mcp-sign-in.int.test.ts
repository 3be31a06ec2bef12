// A desktop MCP client signing its person in through mcp-remote (the stdio bridge desktop clients
// use for OAuth servers), against the local realm's registration policies: what it sends is
// accepted, and a self-registered client that aims anywhere but the loopback interface, or at the
// claims the front door trusts, is refused.
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRoles } from '@gatehouse/governance';
import { AccessTokenVerifier } from '@gatehouse/identity';
import { AgentPolicy, liveRoleTools } from '@gatehouse/mcp';
import type { RunningMcpService } from '@gatehouse/mcp';
import { startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse } from '../support/gatehouse.js';
import { ISSUER, PEOPLE } from '../support/identity.js';
import { signInAtIdp } from '../support/idp-pages.js';
import { dataOf, signInRunOf, startFrontDoor } from '../support/mcp.js';
import type { McpResult } from '../support/mcp.js';
import { pollUntil } from '../support/poll.js';
import { realmClients } from '../support/realm-clients.js';
import { REFERENCE_ROLES_FILE } from '../support/reference-pack.js';
import { TEST_FRONT_DOOR_KEY } from '../support/signing.js';

const require = createRequire(import.meta.url);
const MCP_REMOTE = require.resolve('mcp-remote/dist/proxy.js');
const AGENT_POLICY = fileURLToPath(new URL('../../examples/customer-support/pack/config/agent-policy.json', import.meta.url));
// The audience the realm's gatehouse.mcp scope gives people's tokens for the tests' front door. This
// one listens on a port of its own, beside test/mcp-sign-in.int.test.ts's; its resource metadata
// names its own URL, which mcp-remote checks against the URL it was given.
const AUDIENCE = 'http://127.0.0.1:18095/mcp';
/** What mcp-remote 0.15.1 registers as its home page unless told otherwise. */
const MCP_REMOTE_CLIENT_URI = 'https://github.com/modelcontextprotocol/mcp-cli';
const LOOPBACK = /^https?:\/\/(127\.0\.0\.1|\[::1\]|localhost)(:\d+)?\//;
const REGISTRATION = `${ISSUER}/clients-registrations`;
const toolName = (address: string): string => address.replace('.v', '_v');

/** A port nothing listens on now, for mcp-remote's callback listener. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether something accepts connections at a loopback URL's port. */
const listening = (url: URL): Promise<boolean | undefined> =>
  new Promise((resolve) => {
    const socket = connect(Number(url.port), '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(undefined));
  });

const registerClient = (provider: 'openid-connect' | 'default', body: Record<string, unknown>): Promise<Response> =>
  fetch(`${REGISTRATION}/${provider}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** A loopback-only client as an MCP client registers one, with a name of its own to find it by. */
const mcpClient = (name: string, redirect = 'http://127.0.0.1:33418/callback'): Record<string, unknown> => ({
  client_name: name,
  client_uri: MCP_REMOTE_CLIENT_URI,
  redirect_uris: [redirect],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  scope: 'gatehouse.mcp',
});

describe('A desktop MCP client that signs its person in through mcp-remote, against the local realm', () => {
  let g: Gatehouse;
  let door: RunningMcpService;
  let dir: string;

  beforeAll(async () => {
    g = await startGatehouse('mcpremote');
    const roles = loadRoles(REFERENCE_ROLES_FILE, g.catalog);
    door = await startFrontDoor(g, {
      transport: { kind: 'http', host: '127.0.0.1', port: 0, signingKey: TEST_FRONT_DOOR_KEY },
      people: {
        verifier: await AccessTokenVerifier.discover({ issuer: ISSUER, audience: AUDIENCE }),
        policy: AgentPolicy.load(AGENT_POLICY, liveRoleTools(roles, g.catalog), 24 * 3600 * 1000),
        scope: 'gatehouse.mcp',
      },
    });
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-mcp-remote-'));
  });
  afterAll(async () => {
    await door?.stop();
    await g?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('registers mcp-remote as it registers by default, signs the person in at the login and consent pages, and serves their run over stdio', async () => {
    // A desktop without a display: mcp-remote's opener (xdg-open) hands the sign-in page to $BROWSER,
    // here a script that writes it down for this test to follow.
    const opened = join(dir, 'opened');
    const browser = join(dir, 'browser.sh');
    await writeFile(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
    await chmod(browser, 0o755);
    // The callback port is given: without it mcp-remote derives one from the server URL and, when
    // that one is taken, listens on another than the redirect URI it already sent (it binds its
    // listener only after the browser step, because the front door answers its GET probe with 405).
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, door.url, String(await freePort())],
      env: { ...getDefaultEnvironment(), BROWSER: browser, MCP_REMOTE_CONFIG_DIR: join(dir, 'config') },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'desktop-client', version: '1.0.0' });
    try {
      // mcp-remote signs in before it serves stdio, so initialize is answered once the person has.
      const connecting = client.connect(transport);
      // Awaited below; a failure before then is reported with mcp-remote's stderr, not as unhandled.
      connecting.catch(() => undefined);
      const page = await pollUntil(
        async () => (await readFile(opened, 'utf8').catch(() => '')).split('\n')[0] || undefined,
        20_000,
        'mcp-remote to open the sign-in page',
      );
      const authorization = new URL(page);
      expect(authorization.href.startsWith(`${ISSUER}/protocol/openid-connect/auth`)).toBe(true);
      const redirectUri = authorization.searchParams.get('redirect_uri') ?? '';
      expect(redirectUri).toMatch(LOOPBACK);
      const callback = await signInAtIdp(authorization.href, PEOPLE.owner, redirectUri);
      expect(callback.searchParams.get('code')).toBeTruthy();
      // The browser lands on mcp-remote's loopback listener, which takes the code.
      await pollUntil(() => listening(callback), 10_000, "mcp-remote's callback listener");
      expect((await fetch(callback)).status).toBe(200);
      await connecting;

      // It registered with the metadata it sends unless told otherwise; the realm asks for consent.
      const saved = (await readdir(join(dir, 'config'), { recursive: true })).find((file) => file.endsWith('_client_info.json'));
      const info = JSON.parse(await readFile(join(dir, 'config', saved ?? 'none'), 'utf8')) as Record<string, unknown>;
      expect(info).toMatchObject({ client_uri: MCP_REMOTE_CLIENT_URI, redirect_uris: [redirectUri] });
      expect(await realmClients((c) => c.clientId === info['client_id'])).toEqual([
        expect.objectContaining({ baseUrl: MCP_REMOTE_CLIENT_URI, redirectUris: [redirectUri], consentRequired: true }),
      ]);

      // The person's run: on their behalf, registered by the front door; its tools and nothing else.
      const { run } = await signInRunOf(g);
      expect(run).toMatchObject({
        tenant: 'acme',
        role: 'support-agent',
        on_behalf_of: { issuer: ISSUER, subject: PEOPLE.owner.subject },
        registered_by: { client_id: 'gatehouse-mcp' },
      });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual((run?.capabilities ?? []).map(toolName).sort());
      const read = (await client.callTool({ name: 'get_customer_v1', arguments: { customer_id: 'C-1842' } })) as McpResult;
      expect(dataOf(read)).toMatchObject({ customer_id: 'C-1842' });
    } catch (error) {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\nmcp-remote's stderr:\n${stderr}`, { cause: error });
    } finally {
      await client.close();
    }
  });

  it('refuses a registration whose redirect URI leaves the loopback interface, and registers nothing', async () => {
    const name = `attacker-${Date.now()}`;
    for (const redirect of [
      'https://attacker.example/cb',
      'http://localhost.attacker.example/cb',
      'com.example.app:/cb',
      'javascript:alert(1)',
    ]) {
      const refused = await registerClient('openid-connect', mcpClient(name, redirect));
      expect([400, 403], `${redirect}: HTTP ${refused.status}`).toContain(refused.status);
      expect(await refused.json()).not.toHaveProperty('client_id');
    }
    // A client with no sign-in flow at all still may not name another host (the logout endpoint
    // would redirect there).
    const flowless = await registerClient('default', {
      clientId: `${name}-flowless`,
      standardFlowEnabled: false,
      redirectUris: ['https://attacker.example/cb'],
    });
    expect([400, 403]).toContain(flowless.status);
    expect(await realmClients((c) => c.name === name || c.clientId.startsWith(name))).toEqual([]);
  });

  it('refuses a self-registered client that moves its redirect URI off loopback with its registration access token', async () => {
    const name = `mover-${Date.now()}`;
    const registered = await registerClient('openid-connect', mcpClient(name));
    expect(registered.status).toBe(201);
    const client = (await registered.json()) as { client_id: string; registration_client_uri: string; registration_access_token: string };
    const moved = await fetch(client.registration_client_uri, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${client.registration_access_token}` },
      body: JSON.stringify({ ...mcpClient(name, 'https://attacker.example/cb'), client_id: client.client_id }),
    });
    expect([400, 403]).toContain(moved.status);
    expect(await realmClients((c) => c.clientId === client.client_id)).toEqual([
      expect.objectContaining({ redirectUris: ['http://127.0.0.1:33418/callback'] }),
    ]);
    const removed = await fetch(client.registration_client_uri, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${client.registration_access_token}` },
    });
    expect(removed.status).toBe(204);
  });

  it('refuses a self-registered client a mapper that would put a value the person edits into a claim the front door trusts', async () => {
    // A person edits their own first name; mapped into `groups`, it would make them an agent owner.
    const mapper = (type: string) => ({
      name: 'groups from first name',
      protocol: 'openid-connect',
      protocolMapper: type,
      config: { 'user.attribute': 'firstName', 'claim.name': 'groups', multivalued: 'true', 'access.token.claim': 'true' },
    });
    const name = `mapper-${Date.now()}`;
    for (const type of ['oidc-usermodel-attribute-mapper', 'oidc-usermodel-property-mapper']) {
      const refused = await registerClient('default', {
        clientId: `${name}-${type}`,
        redirectUris: ['http://127.0.0.1:33418/callback'],
        optionalClientScopes: ['gatehouse.mcp'],
        protocolMappers: [mapper(type)],
      });
      expect(refused.status, type).toBe(403);
    }
    expect(await realmClients((c) => c.clientId.startsWith(name))).toEqual([]);
  });
});
