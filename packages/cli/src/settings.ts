import { usageError } from './exit-code.js';
import type { Env } from './io.js';

/** A Gatehouse HTTP API the CLI talks to, from the environment. */
export interface HttpTarget {
  /** For messages: "the control API". */
  readonly name: string;
  readonly url: string;
  readonly token: string;
  readonly timeoutMs: number;
}

export const CLI_ENV_DEFAULTS = {
  GATEHOUSE_CONTROL_URL: 'http://127.0.0.1:8091',
  GATEHOUSE_APPROVAL_URL: 'http://127.0.0.1:8093',
  GATEHOUSE_CLI_TIMEOUT_MS: '10000',
} as const;

function value(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function httpUrl(env: Env, name: keyof typeof CLI_ENV_DEFAULTS): string {
  const raw = value(env, name) ?? CLI_ENV_DEFAULTS[name];
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw usageError(`${name} is not a URL: "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

function timeoutMs(env: Env): number {
  const raw = value(env, 'GATEHOUSE_CLI_TIMEOUT_MS') ?? CLI_ENV_DEFAULTS.GATEHOUSE_CLI_TIMEOUT_MS;
  const ms = Number(raw);
  if (!Number.isSafeInteger(ms) || ms < 1) throw usageError(`GATEHOUSE_CLI_TIMEOUT_MS must be a positive integer, got "${raw}"`);
  return ms;
}

function target(
  env: Env,
  name: string,
  urlVariable: 'GATEHOUSE_CONTROL_URL' | 'GATEHOUSE_APPROVAL_URL',
  tokenVariable: string,
  whose: string,
): HttpTarget {
  const url = httpUrl(env, urlVariable);
  const token = value(env, tokenVariable);
  if (token === undefined) throw usageError(`${tokenVariable} is not set: ${name} needs ${whose} bearer token`);
  return { name, url, token, timeoutMs: timeoutMs(env) };
}

/** The policy service's control API (runs, operations): trusted callers only. */
export function controlApi(env: Env): HttpTarget {
  return target(env, 'the control API', 'GATEHOUSE_CONTROL_URL', 'GATEHOUSE_CONTROL_TOKEN', 'the trusted callers’');
}

/** The control API's operator routes (operations), as one operator: a person's access token says who. */
export function operatorApi(env: Env): HttpTarget {
  return target(env, 'the control API', 'GATEHOUSE_CONTROL_URL', 'GATEHOUSE_OPERATOR_TOKEN', 'an operator’s');
}

/** The approval service's API, as one approver (the token says who). */
export function approvalApi(env: Env): HttpTarget {
  return target(env, 'the approval API', 'GATEHOUSE_APPROVAL_URL', 'GATEHOUSE_APPROVER_TOKEN', 'an approver’s');
}

/** The OpenID Provider and the CLI's client there, for signing a person in. */
export interface IdentityProviderTarget {
  readonly issuer: string;
  readonly clientId: string;
  readonly timeoutMs: number;
}

export function identityProvider(env: Env): IdentityProviderTarget {
  const issuer = value(env, 'GATEHOUSE_OIDC_ISSUER');
  if (issuer === undefined) throw usageError('GATEHOUSE_OIDC_ISSUER is not set: signing in needs the identity provider');
  return { issuer, clientId: value(env, 'GATEHOUSE_CLI_CLIENT_ID') ?? 'gatehouse-cli', timeoutMs: timeoutMs(env) };
}
