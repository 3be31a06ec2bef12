import { CookieJar } from './identity.js';
import type { Person } from './identity.js';

const HIDDEN = /<input type="hidden" name="([^"]+)" value="([^"]*)"/g;

/**
 * Takes an authorization request through Keycloak's own pages the way a person's browser does,
 * without one: the login form, then the consent form when Keycloak shows one. Resolves with the
 * redirect to the client's redirect URI, unfollowed: the caller hands it to the client, as the
 * browser would.
 */
export async function signInAtIdp(authorizationUrl: string, person: Person, redirectUri: string): Promise<URL> {
  const cookies = new CookieJar();
  let at = new URL(authorizationUrl);
  let response = await fetch(at, { redirect: 'manual' });
  for (let step = 0; step < 10; step += 1) {
    cookies.take(response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      const next = new URL(location, at);
      if (next.href.startsWith(redirectUri)) return next;
      at = next;
      response = await fetch(at, { redirect: 'manual', headers: { cookie: cookies.header() } });
      continue;
    }
    const html = await response.text();
    const form = /<form([^>]*)>([\s\S]*?)<\/form>/.exec(html);
    const action = form === null ? undefined : /action="([^"]+)"/.exec(form[1] ?? '')?.[1];
    if (form === null || action === undefined)
      throw new Error(`Keycloak answered HTTP ${response.status} without a form or a redirect: ${html.slice(0, 300)}`);
    const fields: Record<string, string> = (form[1] ?? '').includes('id="kc-form-login"')
      ? { username: person.username, password: person.password, credentialId: '' }
      : { ...Object.fromEntries([...(form[2] ?? '').matchAll(HIDDEN)].map((m) => [m[1] ?? '', m[2] ?? ''])), accept: 'Yes' };
    at = new URL(action.replaceAll('&amp;', '&'), at);
    response = await fetch(at, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: cookies.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });
  }
  throw new Error(`Keycloak's sign-in took more than 10 pages without redirecting to ${redirectUri}`);
}
