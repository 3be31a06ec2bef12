// Global setup of the integration and fault projects: the clients only tests use, added to the
// local realm when the tests start. The realm `npm start` imports (deploy/local/keycloak) holds only
// what a deployment would; a public client with the password grant and the runs scope would let any
// person of the realm mint a control-API token, so it never ships there.
import { randomUUID } from 'node:crypto';

const KEYCLOAK_URL = process.env['KEYCLOAK_URL'] ?? 'http://127.0.0.1:18080';
const REALM = 'gatehouse';
// The local stack's bootstrap administrator (deploy/local/stack-keycloak.mjs): in memory, on loopback.
const ADMIN = { username: 'admin', password: 'admin-local-only' };

const passwordClient = (clientId: string, name: string, attributes: Record<string, string> = {}) => ({
  clientId,
  name,
  enabled: true,
  protocol: 'openid-connect',
  publicClient: true,
  standardFlowEnabled: false,
  implicitFlowEnabled: false,
  directAccessGrantsEnabled: true,
  defaultClientScopes: ['basic', 'acr', 'profile', 'email', 'gatehouse.approvals'],
  optionalClientScopes: ['gatehouse.runs', 'gatehouse.mcp', 'gatehouse.delegation'],
  attributes,
});

/** A second piece of trusted code: registers runs as the orchestrator does, under a client of its own. */
export const SECOND_ORCHESTRATOR = { id: 'gatehouse-test-orchestrator', secret: 'test-orchestrator-local-only-secret' } as const;

/** The test-only clients: people's tokens by password, of 5 min and of 1 s; a second orchestrator. */
export const TEST_CLIENTS = [
  passwordClient('gatehouse-test', "Tests only: test users' tokens by password"),
  passwordClient('gatehouse-test-short', 'Tests only: tokens that expire after 1 s', { 'access.token.lifespan': '1' }),
  {
    clientId: SECOND_ORCHESTRATOR.id,
    name: 'Tests only: a second orchestrator, for what one registering client may do to another’s runs',
    enabled: true,
    protocol: 'openid-connect',
    publicClient: false,
    secret: SECOND_ORCHESTRATOR.secret,
    standardFlowEnabled: false,
    directAccessGrantsEnabled: false,
    serviceAccountsEnabled: true,
    defaultClientScopes: ['basic', 'acr', 'gatehouse.runs'],
    optionalClientScopes: [],
    attributes: {},
  },
] as const;

/**
 * A person only tests use: an ops-admin of globex alone, to show that an operator of one tenant
 * cannot see or settle another's operations (the realm's ops-admin, Omar Ops, holds both tenants).
 * Keycloak gives them a subject of its own at creation.
 */
export const GLOBEX_OPERATOR = { username: 'ops@globex.example', password: 'globex-ops-local-only', name: 'Greta Globex-Ops' } as const;

const TEST_PEOPLE = [
  {
    username: GLOBEX_OPERATOR.username,
    email: GLOBEX_OPERATOR.username,
    emailVerified: true,
    enabled: true,
    firstName: 'Greta',
    lastName: 'Globex-Ops',
    attributes: { tenant: ['globex'] },
    groups: ['/ops-admins'],
    credentials: [{ type: 'password', value: GLOBEX_OPERATOR.password, temporary: false }],
  },
] as const;

async function adminToken(): Promise<string> {
  const response = await fetch(`${KEYCLOAK_URL}/realms/master/protocol/openid-connect/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', ...ADMIN }),
  });
  if (response.status !== 200) throw new Error(`the local Keycloak refused its administrator: HTTP ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** Adds each test client the realm lacks; one it has is left as it is. */
export async function addTestClients(): Promise<void> {
  const headers = { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/json' };
  for (const client of TEST_CLIENTS) {
    const found = await fetch(`${KEYCLOAK_URL}/admin/realms/${REALM}/clients?clientId=${client.clientId}`, { headers });
    if (found.status !== 200) throw new Error(`listing the realm's clients answered HTTP ${found.status}`);
    if (((await found.json()) as unknown[]).length > 0) continue;
    const created = await fetch(`${KEYCLOAK_URL}/admin/realms/${REALM}/clients`, { method: 'POST', headers, body: JSON.stringify(client) });
    if (created.status !== 201 && created.status !== 409)
      throw new Error(`adding the test client ${client.clientId} answered HTTP ${created.status}: ${await created.text()}`);
  }
}

/** Adds each test person the realm lacks; one it has is left as it is. */
export async function addTestPeople(): Promise<void> {
  const headers = { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/json' };
  for (const person of TEST_PEOPLE) {
    const found = await fetch(`${KEYCLOAK_URL}/admin/realms/${REALM}/users?exact=true&username=${encodeURIComponent(person.username)}`, {
      headers,
    });
    if (found.status !== 200) throw new Error(`listing the realm's users answered HTTP ${found.status}`);
    if (((await found.json()) as unknown[]).length > 0) continue;
    const created = await fetch(`${KEYCLOAK_URL}/admin/realms/${REALM}/users`, { method: 'POST', headers, body: JSON.stringify(person) });
    if (created.status !== 201 && created.status !== 409)
      throw new Error(`adding the test person ${person.username} answered HTTP ${created.status}: ${await created.text()}`);
  }
}

export async function setup(): Promise<void> {
  await addTestClients();
  await addTestPeople();
}

/** A person created for one test, and what the IdP can do to them afterwards. */
export interface DisposablePerson {
  readonly username: string;
  readonly password: string;
  readonly name: string;
  /** Keycloak's id for them: the subject of their tokens. */
  readonly subject: string;
  /** Takes them out of every group: they map to no approver role. */
  leaveGroups(): Promise<void>;
  /** Disables their account. */
  disable(): Promise<void>;
  /** Ends every session they hold at the IdP (an administrator's "sign out"). */
  signOutEverywhere(): Promise<void>;
  /** Removes them from the realm. */
  remove(): Promise<void>;
}

/**
 * A new person of the realm, in `groups` with `tenants`, under a random name: tests that change what
 * the IdP says of a person use one of these, never a person other tests share.
 */
export async function addDisposablePerson(groups: readonly string[], tenants: readonly string[]): Promise<DisposablePerson> {
  const admin = async (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${KEYCLOAK_URL}/admin/realms/${REALM}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/json' },
    });
  const tag = randomUUID().slice(0, 8);
  const person = { username: `person-${tag}@acme.example`, password: `password-${randomUUID()}`, name: `Dana Disposable-${tag}` };
  const created = await admin('/users', {
    method: 'POST',
    body: JSON.stringify({
      username: person.username,
      email: person.username,
      emailVerified: true,
      enabled: true,
      firstName: 'Dana',
      lastName: `Disposable-${tag}`,
      attributes: { tenant: [...tenants] },
      groups: [...groups],
      credentials: [{ type: 'password', value: person.password, temporary: false }],
    }),
  });
  if (created.status !== 201) throw new Error(`adding a person answered HTTP ${created.status}: ${await created.text()}`);
  const subject = (created.headers.get('location') ?? '').split('/').pop() ?? '';
  const expect2xx = async (what: string, response: Promise<Response>): Promise<void> => {
    const answered = await response;
    if (answered.status >= 300) throw new Error(`${what} answered HTTP ${answered.status}: ${await answered.text()}`);
  };
  return {
    ...person,
    subject,
    async leaveGroups() {
      const joined = (await (await admin(`/users/${subject}/groups`)).json()) as { id: string }[];
      for (const group of joined) await expect2xx('leaving a group', admin(`/users/${subject}/groups/${group.id}`, { method: 'DELETE' }));
    },
    async disable() {
      await expect2xx('disabling a person', admin(`/users/${subject}`, { method: 'PUT', body: JSON.stringify({ enabled: false }) }));
    },
    async signOutEverywhere() {
      await expect2xx('signing a person out', admin(`/users/${subject}/logout`, { method: 'POST' }));
    },
    async remove() {
      await expect2xx('removing a person', admin(`/users/${subject}`, { method: 'DELETE' }));
    },
  };
}
