// What the two demos share: the transcript's printing, the step checks, the demo approver, the
// settings that keep a demo's topics, keys and tables apart, and plain HTTP calls.
import { randomUUID } from 'node:crypto';

// A demo approver of the reference pack (examples/customer-support/config/approvers.json) — not for production.
export const DEMO_APPROVER = { identity: 'demo-lead@acme.example', token: 'demo-lead-cda8e496f077ea72ce5d11ff7f871b3e' };
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
    controlToken: process.env.GATEHOUSE_CONTROL_TOKEN ?? `demo-control-token-${randomUUID()}`,
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
      out(`\n${failed.length === 0 ? bold(`All ${steps.length} ${what}.`) : bold(`${failed.length} of ${steps.length} steps did not: ${failed.map((f) => f.name).join('; ')}`)}`);
      return failed.length === 0;
    },
  };
}

/** A JSON call with a bearer token; the status and the parsed body. */
export async function http(method, url, token, body) {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

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
