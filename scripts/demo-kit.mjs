// What the two demos share: the transcript's printing, the step checks, the approver's sign-in at
// the local identity provider, the settings that keep a demo's topics, keys and tables apart, and
// plain HTTP calls.
import { randomUUID } from 'node:crypto';
import { URLSearchParams } from 'node:url';
import { LOCAL_IDENTITY, LOCAL_ORCHESTRATOR } from './services.mjs';

// A person of the local stack's Keycloak realm (deploy/local/keycloak/gatehouse-realm.json): a
// support lead of acme and globex by group and tenant claims. The password is local-only.
export const DEMO_PERSON = { username: 'lead@acme.example', password: 'lead-local-only' };

// The demo's operator (realm user ops@acme.example): an ops-admin of acme and globex by group and
// tenant claims, so the control API lets them settle the unknown outcome. The password is local-only.
export const DEMO_OPERATOR = { username: 'ops@acme.example', password: 'ops-local-only' };

// The person whose agent the demo's runs are (realm user owner@acme.example): named on each run,
// so they could never approve its writes themselves.
export const AGENT_OWNER = {
  issuer: LOCAL_IDENTITY.GATEHOUSE_OIDC_ISSUER,
  subject: '7b0c1d52-5a4e-4e0b-9d51-1a0e5c1ea005',
  name: 'Otto Owner',
};

/** The orchestrator's access token, by OAuth client credentials at the local identity provider. */
export async function orchestratorToken() {
  const response = await fetch(`${LOCAL_IDENTITY.GATEHOUSE_OIDC_ISSUER}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${LOCAL_ORCHESTRATOR.clientId}:${LOCAL_ORCHESTRATOR.clientSecret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  const body = await response.json();
  if (response.status !== 200)
    throw new Error(`the identity provider refused the orchestrator's client credentials: ${JSON.stringify(body)}`);
  return body.access_token;
}
export const CONTROL = 'http://127.0.0.1:8091';
export const APPROVAL = 'http://127.0.0.1:8093';

export const out = (line = '') => process.stdout.write(`${line}\n`);
export const dim = (text) => (process.stdout.isTTY ? `\x1b[2m${text}\x1b[0m` : text);
export const bold = (text) => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[0m` : text);
export const show = (value) => JSON.stringify(value);

/**
 * The services' settings for one demo session: its own topic prefix, Redis prefix and database
 * schemas (so demos never see each other's state), plus `extra`.
 */
export function demoEnv(name, extra = {}) {
  const session = randomUUID().replace(/-/g, '').slice(0, 8);
  const schema = name.replace(/-/g, '_');
  return {
    session,
    env: {
      GATEHOUSE_TOPIC_PREFIX: `${name}.`,
      GATEHOUSE_REDIS_PREFIX: `${name}-${session}:`,
      CUSTOMERS_DB_SCHEMA: `${schema}_customers_${session}`,
      APPROVALS_DB_SCHEMA: `${schema}_approvals_${session}`,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      ...extra,
    },
  };
}

/** The checks of a transcript: each prints ✔ or ✖; `summary` says whether every one held. */
export function checklist() {
  const steps = [];
  return {
    check(name, ok, detail) {
      steps.push({ name, ok });
      out(`   ${ok ? '✔' : '✖'} ${name}${ok ? '' : ` — ${detail}`}`);
    },
    /** Prints the closing line; true when every step held. */
    summary(what) {
      const failed = steps.filter((s) => !s.ok);
      out(
        `\n${failed.length === 0 ? bold(`All ${steps.length} ${what}.`) : bold(`${failed.length} of ${steps.length} steps did not: ${failed.map((f) => f.name).join('; ')}`)}`,
      );
      return failed.length === 0;
    },
  };
}

/** A JSON call with a bearer token, or as a signed-in console session ({ cookie, csrf }); the status and the parsed body. */
export async function http(method, url, auth, body) {
  const credentials = typeof auth === 'string' ? { authorization: `Bearer ${auth}` } : { cookie: auth.cookie, 'x-csrf-token': auth.csrf };
  const response = await fetch(url, {
    method,
    headers: { ...credentials, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

/**
 * What an approver was shown (a GET /api/approvals/:id answer), sent back with their decision: the
 * approval service refuses a decision whose hash or target version differs from the stored request.
 */
export const shownIn = (detail) => ({ arguments_sha256: detail.request.arguments_sha256, target_version: detail.request.target.version });

/** Polls `check` every 50 ms until it yields a value. */
export async function waitFor(check, timeoutMs, what) {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The cookies a response sets, as one Cookie header value (added to `jar`). */
function keepCookies(response, jar) {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    // A cookie the server clears (empty, expired) is forgotten, as a browser does.
    if (value === '' || /;\s*max-age=0/i.test(line)) jar.delete(name);
    else jar.set(name, value);
  }
  return [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
}

function redirectOf(response, what) {
  const location = response.headers.get('location');
  if (location === null) throw new Error(`${what} answered HTTP ${response.status} without a redirect`);
  return location;
}

/**
 * Signs a person in to the approval console the way their browser would, through the identity
 * provider's own login form: the console's /login (Authorization Code with PKCE), Keycloak's page,
 * the callback. Resolves the session ({ cookie, csrf }) and who the console says signed in.
 */
export async function signInApprover(approvalUrl, person = DEMO_PERSON) {
  const idp = new Map();
  const consoleJar = new Map();
  const start = await fetch(`${approvalUrl}/login`, { redirect: 'manual' });
  // The console binds the sign-in to the browser that started it: its cookie goes back with the callback.
  const binding = keepCookies(start, consoleJar);
  const page = await fetch(redirectOf(start, 'the console'), { redirect: 'manual' });
  const idpCookies = keepCookies(page, idp);
  const action = /<form[^>]*id="kc-form-login"[^>]*action="([^"]+)"/.exec(await page.text())?.[1];
  if (action === undefined) throw new Error(`the identity provider's login page has no login form (HTTP ${page.status})`);
  const posted = await fetch(action.replaceAll('&amp;', '&'), {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: idpCookies, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: person.username, password: person.password, credentialId: '' }),
  });
  const back = await fetch(redirectOf(posted, "the identity provider's login form"), {
    redirect: 'manual',
    headers: { cookie: binding },
  });
  const cookie = keepCookies(back, consoleJar);
  if (cookie === '') throw new Error(`the console refused ${person.username}: ${redirectOf(back, 'the callback')}`);
  const me = await fetch(`${approvalUrl}/api/me`, { headers: { cookie } });
  const body = await me.json();
  if (me.status !== 200) throw new Error(`the console did not know ${person.username} after sign-in: ${JSON.stringify(body)}`);
  return { cookie, csrf: body.csrf_token, me: body };
}

/** The action of the first form of an identity provider's page (the one with `id` when given), absolute. */
function formAction(html, base, id) {
  const form = id === undefined ? /<form[^>]*action="([^"]+)"/ : new RegExp(`<form[^>]*id="${id}"[^>]*action="([^"]+)"`);
  const action = form.exec(html)?.[1];
  if (action === undefined) throw new Error(`the identity provider's page at ${base} has no ${id ?? ''} form`);
  return new URL(action.replaceAll('&amp;', '&'), base).href;
}

/**
 * Signs a person in the way `gatehouse operations sign-in` does — the device authorization grant
 * (RFC 8628) of the CLI's public client, `gatehouse-cli` — and enters the code at the identity
 * provider's own pages as their browser would: its login form, then its consent to the device.
 * Resolves their access token and who it names (issuer, subject, name), for the control API's
 * operator routes.
 */
export async function signInOperator(person = DEMO_OPERATOR, clientId = 'gatehouse-cli') {
  const issuer = LOCAL_IDENTITY.GATEHOUSE_OIDC_ISSUER;
  const metadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  const started = await fetch(metadata.device_authorization_endpoint, {
    method: 'POST',
    body: new URLSearchParams({ client_id: clientId, scope: 'openid' }),
  });
  const device = await started.json();
  if (started.status !== 200) throw new Error(`the identity provider refused a device sign-in for ${clientId}: ${JSON.stringify(device)}`);
  // The person opens the link the CLI prints: the IdP asks them to sign in, then to let the device in.
  const idp = new Map();
  const opened = await fetch(device.verification_uri_complete, { redirect: 'manual' });
  const loginUrl = new URL(redirectOf(opened, 'the device page'), device.verification_uri_complete).href;
  const page = await fetch(loginUrl, { redirect: 'manual', headers: { cookie: keepCookies(opened, idp) } });
  const afterPage = keepCookies(page, idp);
  const loginAction = formAction(await page.text(), loginUrl, 'kc-form-login');
  const posted = await fetch(loginAction, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: afterPage, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: person.username, password: person.password, credentialId: '' }),
  });
  const consentUrl = new URL(redirectOf(posted, "the identity provider's login form"), loginAction).href;
  const consent = await fetch(consentUrl, { redirect: 'manual', headers: { cookie: keepCookies(posted, idp) } });
  const afterConsent = keepCookies(consent, idp);
  const consentPage = await consent.text();
  const code = /name="code" value="([^"]*)"/.exec(consentPage)?.[1];
  const granted = await fetch(formAction(consentPage, consentUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: afterConsent, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...(code === undefined ? {} : { code }), accept: 'Yes' }),
  });
  redirectOf(granted, "the identity provider's consent page");
  // The CLI's side: poll the token endpoint at the interval the IdP asked for, until it answers.
  const body = await waitFor(
    async () => {
      const polled = await fetch(metadata.token_endpoint, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          client_id: clientId,
          device_code: device.device_code,
        }),
      });
      const answer = await polled.json();
      if (polled.status === 200) return answer;
      if (answer.error !== 'authorization_pending' && answer.error !== 'slow_down')
        throw new Error(`the identity provider refused ${person.username}'s device sign-in: ${JSON.stringify(answer)}`);
      await new Promise((resolve) => setTimeout(resolve, (device.interval ?? 5) * 1000));
      return undefined;
    },
    30_000,
    `${person.username}'s device sign-in`,
  );
  const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1], 'base64url').toString('utf8'));
  return { accessToken: body.access_token, issuer: claims.iss, subject: claims.sub, name: claims.name ?? null, username: person.username };
}
