import type { ExecutionContext } from '@gatehouse/contracts';

/**
 * `fetch` with the call's credential: `Authorization: Bearer <assertion or exchanged token>` added
 * to the request's headers, and the call's signal unless `init` brings its own. The assertion is
 * asked for this request — its method and URL — so it covers this request and no other (a fresh
 * one per request). What a handler uses to reach its system of record.
 */
export async function authorizedFetch(context: ExecutionContext, input: string | URL, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${await context.credential({ method: init.method ?? 'GET', url: input })}`);
  return fetch(input, { ...init, headers, signal: init.signal ?? context.signal });
}
