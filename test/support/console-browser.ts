import type { Person } from './identity.js';

/**
 * A browser as far as the console's sign-in can tell: its own cookies per origin (kept, replaced and
 * cleared as Set-Cookie says), redirects seen one at a time, Keycloak's login form filled in. Two
 * instances are two people's browsers.
 */
export class ConsoleBrowser {
  private readonly jars = new Map<string, Map<string, string>>();

  /** A GET as a navigation makes it, with this browser's cookies for the URL's origin. */
  async open(url: string): Promise<Response> {
    return this.send(url, { method: 'GET' });
  }

  /** The value of a cookie this browser holds for an origin. */
  cookie(origin: string, name: string): string | undefined {
    return this.jars.get(new URL(origin).origin)?.get(name);
  }

  /**
   * Starts a console sign-in (`/login`, with `query` such as `?return=…`) and signs in at the IdP
   * as `person`, through its login form unless this browser is signed in there already; stops
   * where the IdP sends the browser back, and resolves that callback URL without loading it.
   */
  async startSignIn(consoleUrl: string, person: Person, query = ''): Promise<string> {
    const login = await this.open(`${consoleUrl}/login${query}`);
    let atIdp = await this.open(locationOf(login, '/login'));
    if (atIdp.status === 200) {
      const html = await atIdp.text();
      const action = /<form[^>]*id="kc-form-login"[^>]*action="([^"]+)"/.exec(html)?.[1];
      if (action === undefined) throw new Error(`Keycloak's login page has no login form (HTTP ${atIdp.status})`);
      atIdp = await this.send(action.replaceAll('&amp;', '&'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: person.username, password: person.password, credentialId: '' }),
      });
    }
    return locationOf(atIdp, "Keycloak's login");
  }

  /** A whole sign-in: resolves where the console's callback sends the browser. */
  async signIn(consoleUrl: string, person: Person, query = ''): Promise<string> {
    return locationOf(await this.open(await this.startSignIn(consoleUrl, person, query)), 'the callback');
  }

  private async send(url: string, init: RequestInit & { headers?: Record<string, string> }): Promise<Response> {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, ...(cookie === '' ? {} : { cookie }) } });
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const at = pair.indexOf('=');
      if (at <= 0) continue;
      const [name, value] = [pair.slice(0, at), pair.slice(at + 1)];
      const cleared = value === '' || attributes.some((attribute) => /^max-age=(0|-\d+)$/i.test(attribute));
      if (cleared) jar.delete(name);
      else jar.set(name, value);
    }
    return response;
  }
}

export function locationOf(response: Response, what: string): string {
  const location = response.headers.get('location');
  if (location === null) throw new Error(`${what} answered HTTP ${response.status} without a redirect`);
  return location;
}
