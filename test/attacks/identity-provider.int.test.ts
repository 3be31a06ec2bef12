// Surface: the local identity provider's realm (docs/threat-model.md, "IdP realm"). The attacker:
// any person of the realm `npm start` imports, with their own password, asking the IdP for tokens
// through any client that realm defines. The promise: the realm holds only what a deployment would,
// so nobody gets a control-API token (scope gatehouse.runs) or any token by password; the tests'
// password clients are added by the tests' own setup (test/support/test-realm.ts), never shipped.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ISSUER, PEOPLE } from '../support/identity.js';
import { TEST_CLIENTS } from '../support/test-realm.js';

interface RealmClient {
  readonly clientId: string;
  readonly publicClient?: boolean;
  readonly directAccessGrantsEnabled?: boolean;
  readonly serviceAccountsEnabled?: boolean;
  readonly optionalClientScopes?: readonly string[];
  readonly defaultClientScopes?: readonly string[];
}

const realm = JSON.parse(readFileSync(new URL('../../deploy/local/keycloak/gatehouse-realm.json', import.meta.url), 'utf8')) as {
  clients: RealmClient[];
};

describe('the realm npm start imports, asked for tokens by a person of it', () => {
  it('defines no client that takes a password, and none but the orchestrator that can carry the runs scope', () => {
    for (const client of realm.clients) {
      expect(client.directAccessGrantsEnabled ?? false, client.clientId).toBe(false);
      const scopes = [...(client.defaultClientScopes ?? []), ...(client.optionalClientScopes ?? [])];
      if (client.clientId !== 'gatehouse-orchestrator') expect(scopes, client.clientId).not.toContain('gatehouse.runs');
    }
    // The tests' password clients are not in the realm file: the tests add them.
    const shipped = new Set(realm.clients.map((c) => c.clientId));
    for (const test of TEST_CLIENTS) expect(shipped.has(test.clientId)).toBe(false);
  });

  it("refuses every client of the realm a person's password grant for the runs scope, at the running IdP", async () => {
    for (const client of realm.clients) {
      const response = await fetch(`${ISSUER}/protocol/openid-connect/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'password',
          client_id: client.clientId,
          username: PEOPLE.owner.username,
          password: PEOPLE.owner.password,
          scope: 'openid gatehouse.runs',
        }),
      });
      // Confidential clients refuse without their secret (401); public ones refuse the grant (400).
      expect([400, 401], `${client.clientId} answered ${response.status}`).toContain(response.status);
      expect(((await response.json()) as { access_token?: string }).access_token).toBeUndefined();
    }
  });
});
