import * as oidc from 'openid-client';

export type RelyingParty = oidc.Configuration;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Discovers an issuer for one client (openid-client checks that the metadata names the issuer
 * asked for). Plain HTTP is allowed only on loopback, where the local stack's IdP runs; anywhere
 * else an issuer must be HTTPS.
 */
export async function discoverRelyingParty(issuer: string, clientId: string, clientSecret?: string): Promise<RelyingParty> {
  const url = new URL(issuer);
  const plain = url.protocol === 'http:';
  if (plain && !LOOPBACK.has(url.hostname)) throw new Error(`the issuer ${issuer} must be HTTPS (plain HTTP is allowed on loopback only)`);
  const options = plain ? { execute: [oidc.allowInsecureRequests] } : undefined;
  return clientSecret === undefined
    ? oidc.discovery(url, clientId, undefined, oidc.None(), options)
    : oidc.discovery(url, clientId, clientSecret, undefined, options);
}

export { oidc };
