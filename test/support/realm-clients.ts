// What the local realm holds, read with the stack's bootstrap administrator (in memory, on loopback:
// deploy/local/stack-keycloak.mjs), so a test sees what a registration really left behind.
const KEYCLOAK_URL = process.env['KEYCLOAK_URL'] ?? 'http://127.0.0.1:18080';
const ADMIN = { username: 'admin', password: 'admin-local-only' };

/** A client of the realm as its administrator sees it. */
export interface RealmClient {
  readonly clientId: string;
  readonly name?: string;
  readonly baseUrl?: string;
  readonly redirectUris?: readonly string[];
  readonly consentRequired?: boolean;
}

async function adminToken(): Promise<string> {
  const response = await fetch(`${KEYCLOAK_URL}/realms/master/protocol/openid-connect/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', ...ADMIN }),
  });
  if (response.status !== 200) throw new Error(`the local Keycloak refused its administrator: HTTP ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** The realm's clients that `match` picks. */
export async function realmClients(match: (client: RealmClient) => boolean): Promise<RealmClient[]> {
  const response = await fetch(`${KEYCLOAK_URL}/admin/realms/gatehouse/clients?first=0&max=5000`, {
    headers: { authorization: `Bearer ${await adminToken()}` },
  });
  if (response.status !== 200) throw new Error(`listing the realm's clients answered HTTP ${response.status}`);
  return ((await response.json()) as RealmClient[]).filter(match);
}
