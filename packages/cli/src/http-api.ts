import { CliError, ExitCode } from './exit-code.js';
import type { HttpTarget } from './settings.js';

/** Statuses that mean the service is not there (a proxy without upstream, a service not ready). */
const UNREACHABLE_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

interface ErrorBody {
  readonly error?: { readonly code?: unknown; readonly message?: unknown } & Record<string, unknown>;
}

/** Why fetch failed, from its cause: ECONNREFUSED, ENOTFOUND, "bad port"… */
function causeOf(error: unknown): string | undefined {
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string') return cause.code;
  return typeof cause?.message === 'string' ? cause.message : undefined;
}

/**
 * JSON over HTTP with a bearer token. A 2xx answer is returned; anything else becomes a CliError:
 * no connection, a timeout or 502/503/504 → unreachable (3); any other refusal → refused (1),
 * carrying the service's error code and message.
 */
export class HttpApi {
  constructor(private readonly target: HttpTarget) {}

  get<T>(path: string, query: Readonly<Record<string, string | undefined>> = {}): Promise<T> {
    const params = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined));
    const search = params.size === 0 ? '' : `?${params.toString()}`;
    return this.request<T>('GET', `${path}${search}`);
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { name, url, token, timeoutMs } = this.target;
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      const why = timedOut
        ? `no answer within ${timeoutMs} ms`
        : (causeOf(error) ?? (error instanceof Error ? error.message : String(error)));
      throw new CliError(ExitCode.unreachable, 'UNREACHABLE', `cannot reach ${name} at ${url}: ${why}`, { cause: error, details: { url } });
    }
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch (cause) {
      const exitCode = UNREACHABLE_STATUSES.has(response.status) ? ExitCode.unreachable : ExitCode.refused;
      throw new CliError(
        exitCode,
        'NOT_JSON',
        `${name} at ${url} answered ${response.status} with a body that is not JSON (is the URL right?)`,
        {
          cause,
          details: { status: response.status },
        },
      );
    }
    if (response.ok) return parsed as T;
    const error = (parsed as ErrorBody | undefined)?.error;
    const code = typeof error?.code === 'string' ? error.code : `HTTP_${response.status}`;
    const message = typeof error?.message === 'string' ? error.message : `${name} answered ${response.status}`;
    const extra = Object.fromEntries(Object.entries(error ?? {}).filter(([key]) => key !== 'code' && key !== 'message'));
    const exitCode = UNREACHABLE_STATUSES.has(response.status) ? ExitCode.unreachable : ExitCode.refused;
    throw new CliError(exitCode, code, `${name} refused (${response.status} ${code}): ${message}`, {
      details: { status: response.status, ...extra },
    });
  }
}

/** A path segment from user input, so an id can never turn into another route. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}
