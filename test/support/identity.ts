import { fileURLToPath } from 'node:url';
import { ApproverPolicy } from '@gatehouse/approval';
import type { ApproverIdentity } from '@gatehouse/approval';
import { AccessTokenVerifier, discoverRelyingParty } from '@gatehouse/identity';
import { loadOperatorPolicy } from '@gatehouse/policy';
import type { OperatorIdentity, TrustedCallerIdentity } from '@gatehouse/policy';

/** The local stack's Keycloak and the project's realm (deploy/local/keycloak/gatehouse-realm.json). */
const KEYCLOAK_URL = process.env['KEYCLOAK_URL'] ?? 'http://127.0.0.1:18080';
export const ISSUER = `${KEYCLOAK_URL}/realms/gatehouse`;
const TOKEN_ENDPOINT = `${ISSUER}/protocol/openid-connect/token`;
const CONSOLE_CLIENT = { id: 'gatehouse-console', secret: 'console-local-only-secret' } as const;

export interface Person {
  readonly username: string;
  readonly password: string;
  /** The subject the realm pins for them. */
  readonly subject: string;
  readonly name: string;
}

/** The realm's people (local-only passwords): who they are at the IdP, not what Gatehouse lets them do. */
export const PEOPLE = {
  lead: { username: 'lead@acme.example', password: 'lead-local-only', subject: '7b0c1d52-5a4e-4e0b-9d51-1a0e5c1ea001', name: 'Lena Lead' },
  ops: { username: 'ops@acme.example', password: 'ops-local-only', subject: '7b0c1d52-5a4e-4e0b-9d51-1a0e5c1ea002', name: 'Omar Ops' },
  /** In no approver group: signs in at the IdP, is no approver here. */
  viewer: {
    username: 'viewer@acme.example',
    password: 'viewer-local-only',
    subject: '7b0c1d52-5a4e-4e0b-9d51-1a0e5c1ea003',
    name: 'Vera Viewer',
  },
  /** A support lead of globex only. */
  globexLead: {
    username: 'lead@globex.example',
    password: 'globex-lead-local-only',
    subject: '7b0c1d52-5a4e-4e0b-9d51-1a0e5c1ea004',
    name: 'Gina Globex',
  },
  /** A support lead of acme whose agents act on their behalf. */
  owner: {
    username: 'owner@acme.example',
    password: 'owner-local-only',
    subject: '7b0c1d52-5a4e-4e0b-9d51-1a0e5c1ea005',
    name: 'Otto Owner',
  },
} as const satisfies Record<string, Person>;

const REFERENCE_POLICY = fileURLToPath(new URL('../../examples/customer-support/pack/config/approver-policy.json', import.meta.url));

/** The approval service's view of the stack's IdP, with the reference pack's approver policy. */
export async function stackIdentity(
  options: { readonly clockToleranceS?: number; readonly console?: boolean } = {},
): Promise<ApproverIdentity> {
  const accessTokens = await AccessTokenVerifier.discover({
    issuer: ISSUER,
    audience: 'gatehouse-approval',
    clockToleranceS: options.clockToleranceS ?? 30,
  });
  const policy = ApproverPolicy.load(REFERENCE_POLICY, new Set(['support-lead', 'ops-admin']));
  if (options.console === false) return { accessTokens, policy };
  return {
    accessTokens,
    policy,
    console: { relyingParty: await discoverRelyingParty(ISSUER, CONSOLE_CLIENT.id, CONSOLE_CLIENT.secret), clientId: CONSOLE_CLIENT.id },
  };
}

/** The control API's view of the stack's IdP: client-credentials tokens for gatehouse-policy with the runs scope. */
export async function orchestratorIdentity(options: { readonly audience?: string } = {}): Promise<TrustedCallerIdentity> {
  return {
    accessTokens: await AccessTokenVerifier.discover({ issuer: ISSUER, audience: options.audience ?? 'gatehouse-policy' }),
    scope: 'gatehouse.runs',
  };
}

/**
 * The control API's operators at the stack's IdP: people's tokens for gatehouse-approval (the
 * policy service's default POLICY_OPERATOR_AUDIENCE), mapped by the reference approver policy,
 * the role ops-admin (the default POLICY_OPERATOR_ROLE).
 */
export async function operatorIdentity(): Promise<OperatorIdentity> {
  return {
    accessTokens: await AccessTokenVerifier.discover({ issuer: ISSUER, audience: 'gatehouse-approval' }),
    policy: loadOperatorPolicy(REFERENCE_POLICY, new Set(['support-lead', 'ops-admin']), 'ops-admin'),
    role: 'ops-admin',
    runsScope: 'gatehouse.runs',
  };
}

/** The executors' client: it exchanges a run's person's token for a system of record's (RFC 8693). */
export const EXECUTOR_CLIENT = { id: 'gatehouse-executor', secret: 'executor-local-only-secret' } as const;

/** Token exchange for the stack's executors, and the control API's check of the people's tokens handed over. */
export const stackExchange = { issuer: ISSUER, clientId: EXECUTOR_CLIENT.id, clientSecret: EXECUTOR_CLIENT.secret } as const;
export const subjectTokenVerifier = (): Promise<AccessTokenVerifier> =>
  AccessTokenVerifier.discover({ issuer: ISSUER, audience: EXECUTOR_CLIENT.id });

const ORCHESTRATOR = { id: 'gatehouse-orchestrator', secret: 'orchestrator-local-only-secret' } as const;

/** The orchestrator's access token, by client credentials. */
export async function orchestratorToken(client: { readonly id: string; readonly secret: string } = ORCHESTRATOR): Promise<string> {
  const response = await fetch(TOKEN_ENDPOINT, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  if (response.status !== 200)
    throw new Error(`Keycloak refused the client credentials of ${client.id}: HTTP ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** A person's tokens from the realm's test-only password client (`gatehouse-test-short`: expiring after 1 s). */
export async function tokensOf(
  person: Pick<Person, 'username' | 'password'>,
  client: 'gatehouse-test' | 'gatehouse-test-short' = 'gatehouse-test',
  scope = 'openid',
): Promise<{ access_token: string; id_token: string; refresh_token: string }> {
  const response = await fetch(TOKEN_ENDPOINT, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', client_id: client, username: person.username, password: person.password, scope }),
  });
  if (response.status !== 200)
    throw new Error(`Keycloak refused ${person.username}'s password grant: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as { access_token: string; id_token: string; refresh_token: string };
}

/** Cookies a browser would keep, by name, for one origin. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      if (at <= 0) continue;
      const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
      // An empty value is the server clearing the cookie.
      if (value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export interface SignedIn {
  /** The `Cookie` header value that carries the session. */
  readonly cookie: string;
  readonly csrf: string;
  readonly me: Record<string, unknown>;
}

export type SignInStep = { readonly ok: true; readonly signedIn: SignedIn } | { readonly ok: false; readonly location: string };

function locationOf(response: Response, what: string): string {
  const location = response.headers.get('location');
  if (location === null) throw new Error(`${what} answered HTTP ${response.status} without a redirect`);
  return location;
}

/**
 * Signs a person in to the console the way a browser does, without one: /login, Keycloak's own login
 * form (its action URL, cookies and fields), the callback, then /api/me for the CSRF token.
 */
export async function signInAtLoginPage(
  approvalUrl: string,
  person: Person,
  options: { readonly maxAge?: number; readonly callbackHook?: (callback: string) => void } = {},
): Promise<SignInStep> {
  const atIdp = new CookieJar();
  const atConsole = new CookieJar();
  const login = await fetch(`${approvalUrl}/login${options.maxAge === undefined ? '' : `?max_age=${options.maxAge}`}`, {
    redirect: 'manual',
  });
  // The sign-in cookie: the console finishes a sign-in only in the browser that started it.
  atConsole.take(login);
  const page = await fetch(locationOf(login, '/login'), { redirect: 'manual' });
  atIdp.take(page);
  const html = await page.text();
  const action = /<form[^>]*id="kc-form-login"[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (action === undefined) throw new Error(`Keycloak's login page has no login form (HTTP ${page.status})`);
  const posted = await fetch(action.replaceAll('&amp;', '&'), {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: atIdp.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: person.username, password: person.password, credentialId: '' }),
  });
  const callback = locationOf(posted, "Keycloak's login form");
  options.callbackHook?.(callback);
  const back = await fetch(callback, { redirect: 'manual', headers: { cookie: atConsole.header() } });
  atConsole.take(back);
  const landing = locationOf(back, 'the callback');
  const cookie = atConsole.header();
  if (cookie === '') return { ok: false, location: landing };
  const me = await fetch(`${approvalUrl}/api/me`, { headers: { cookie } });
  const body = (await me.json()) as Record<string, unknown>;
  if (me.status !== 200) throw new Error(`/api/me answered HTTP ${me.status} after sign-in: ${JSON.stringify(body)}`);
  return { ok: true, signedIn: { cookie, csrf: String(body['csrf_token']), me: body } };
}

/**
 * Completes a device sign-in (RFC 8628) the way a person does on their phone, without a browser:
 * the verification page, the user code form when Keycloak asks for it, its login form, and a consent
 * form when shown. Resolves once Keycloak says the device is signed in.
 */
export async function completeDeviceSignIn(verificationUrl: string, person: Person, userCode: string): Promise<void> {
  const jar = new CookieJar();
  let response = await fetch(verificationUrl, { redirect: 'manual' });
  for (let step = 0; step < 12; step += 1) {
    jar.take(response);
    if (response.status >= 300 && response.status < 400) {
      response = await fetch(new URL(locationOf(response, 'Keycloak'), verificationUrl), {
        redirect: 'manual',
        headers: { cookie: jar.header() },
      });
      continue;
    }
    const html = await response.text();
    if (/Device Login Successful|device-login-successful|You may now close this window/i.test(html)) return;
    const form = /<form([^>]*)>([\s\S]*?)<\/form>/.exec(html);
    const action = form === null ? undefined : /action="([^"]+)"/.exec(form[1] ?? '')?.[1];
    if (form === null || action === undefined)
      throw new Error(`Keycloak's device pages ended without success (HTTP ${response.status}): ${html.slice(0, 300)}`);
    const hidden = Object.fromEntries(
      [...(form[2] ?? '').matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
    );
    const fields: Record<string, string> = (form[1] ?? '').includes('id="kc-form-login"')
      ? { username: person.username, password: person.password, credentialId: '' }
      : (form[2] ?? '').includes('name="device_user_code"')
        ? { ...hidden, device_user_code: userCode }
        : { ...hidden, accept: 'Yes' }; // the consent to the CLI's sign-in
    response = await fetch(new URL(action.replaceAll('&amp;', '&'), verificationUrl), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });
  }
  throw new Error('Keycloak’s device sign-in took more than 12 pages');
}
