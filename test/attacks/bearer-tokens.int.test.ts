// Surface: the bearer tokens every API takes (docs/threat-model.md, "K-tokens"). The attacker: a
// person of the identity provider holding their own ID token, in a deployment where an API's
// audience is also the client id people sign in with (as Google and Entra ID issue ID tokens). The
// promise: an access token is taken only as an access token; an ID token proves a sign-in happened,
// never that its bearer may call an API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenVerifier } from '@gatehouse/identity';
import { approvalRequest, startApprovalHarness } from '../support/approval.js';
import type { ApprovalHarness } from '../support/approval.js';
import { ISSUER, PEOPLE, stackIdentity, tokensOf } from '../support/identity.js';

// The test client people get tokens from: its id is the `aud` of their ID tokens.
const SIGN_IN_CLIENT = 'gatehouse-test';

describe('an ID token presented as a bearer token to an API whose audience is its client id', () => {
  let h: ApprovalHarness;

  beforeAll(async () => {
    const { policy } = await stackIdentity({ console: false });
    const accessTokens = await AccessTokenVerifier.discover({ issuer: ISSUER, audience: SIGN_IN_CLIENT });
    h = await startApprovalHarness('atk-bearer', { identity: { accessTokens, policy }, tokens: false });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('is refused TOKEN_TYPE_INVALID with its challenge, and shows nothing', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const { id_token: idToken } = await tokensOf(PEOPLE.lead);
    // It is the issuer's, signed, unexpired and for this audience: only its type gives it away.
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString()) as { aud: unknown; typ: unknown };
    expect([claims.aud].flat()).toContain(SIGN_IN_CLIENT);
    expect(claims.typ).toBe('ID');
    for (const path of ['/api/me', '/api/approvals', `/api/approvals/${request.proposal_id}`]) {
      const response = await fetch(`${h.url()}${path}`, { headers: { authorization: `Bearer ${idToken}` } });
      expect(response.status, path).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('TOKEN_TYPE_INVALID');
      expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });

  it('is refused at a decision too, which stays undecided', async () => {
    const request = approvalRequest();
    await h.submit(request);
    const { id_token: idToken } = await tokensOf(PEOPLE.lead);
    const response = await fetch(`${h.url()}/api/approvals/${request.proposal_id}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${idToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ arguments_sha256: request.arguments_sha256, target_version: request.target.version }),
    });
    expect(response.status).toBe(401);
    const { rows } = await h.db.query<{ state: string }>(`SELECT state FROM ${h.t.requests} WHERE proposal_id = $1`, [request.proposal_id]);
    expect(rows).toEqual([{ state: 'pending' }]);
  });
});
