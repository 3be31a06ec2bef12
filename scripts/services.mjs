// Starts Gatehouse's services as child processes (the way they run in production), each logging
// JSON to .stack/logs/<name>.log, and resolves once every one has said it is ready.
import { spawn } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = new URL('..', import.meta.url).pathname;

/**
 * Each service role's signing pair, made fresh for each `npm start` or demo so no key is ever
 * committed or reused: a service signs what it publishes with its role's private key, and every
 * reader gets the public keys (GATEHOUSE_POLICY_KEYS, GATEHOUSE_APPROVAL_KEYS, GATEHOUSE_EXECUTOR_KEYS).
 */
const PAIRS = { policy: localPair('policy'), approval: localPair('approval'), executor: localPair('executor') };

function localPair(role, type = 'ed25519') {
  const { privateKey, publicKey } = generateKeyPairSync(type);
  const id = `local-${role}-${Date.now().toString(36)}`;
  return {
    signingKey: `${id}:${privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64')}`,
    publicKey: `${id}:${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
  };
}

/**
 * The executors' call-assertion pair, also fresh per start and of its own (never an events key):
 * executors sign the assertions every handler call presents with it, and the systems of record
 * check them against its public half, as a JWKS file (what `gatehouse jwks` writes).
 */
const ASSERTION = localPair('assertion');

/** The MCP front doors' pair: they prove the commands of the runs they act for with it (MCP_SIGNING_KEY, GATEHOUSE_MCP_KEYS). */
const FRONT_DOOR = localPair('mcp');

/** The executors' JWKS of this start: the public half of ASSERTION, by its key id. */
export function assertionJwks() {
  const [kid, spki] = ASSERTION.publicKey.split(':');
  const { kty, crv, x } = createPublicKey({ key: Buffer.from(spki, 'base64'), format: 'der', type: 'spki' }).export({ format: 'jwk' });
  return { keys: [{ kty, crv, x, kid, alg: 'EdDSA', use: 'sig' }] };
}

/** Writes this start's JWKS where the local systems of record read it (CUSTOMERS_ASSERTION_KEYS). */
export function writeAssertionJwks(dir = join(root, '.stack')) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'executor-jwks.json');
  writeFileSync(file, JSON.stringify(assertionJwks(), null, 2) + '\n');
  return file;
}

/** The public keys of this start's services: what an agent client, the CLI or a subscriber checks answers with. */
export const PUBLIC_KEYS = {
  GATEHOUSE_POLICY_KEYS: PAIRS.policy.publicKey,
  GATEHOUSE_APPROVAL_KEYS: PAIRS.approval.publicKey,
  GATEHOUSE_EXECUTOR_KEYS: PAIRS.executor.publicKey,
};

/** Writes this start's public keys where a local agent, subscriber or CLI can read them (`set -a; . .stack/public-keys.env`). */
export function writePublicKeys(dir = join(root, '.stack')) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'public-keys.env');
  writeFileSync(
    file,
    Object.entries(PUBLIC_KEYS)
      .map(([name, value]) => `${name}=${value}`)
      .join('\n') + '\n',
  );
  return file;
}

/**
 * The local stack's identity provider (Keycloak, deploy/local/keycloak/) as the approval service
 * uses it: approvers sign in there through the console's client. Any of these set in the
 * environment wins, so another issuer can be tried locally.
 */
export const LOCAL_IDENTITY = Object.freeze({
  GATEHOUSE_OIDC_ISSUER: `${process.env.KEYCLOAK_URL ?? 'http://127.0.0.1:18080'}/realms/gatehouse`,
  GATEHOUSE_OIDC_CLIENT_ID: 'gatehouse-console',
  GATEHOUSE_OIDC_CLIENT_SECRET: 'console-local-only-secret',
});

/**
 * Trusted code of the local realm: the orchestrator that registers runs, with OAuth client
 * credentials (scope gatehouse.runs). Local-only secret.
 */
export const LOCAL_ORCHESTRATOR = Object.freeze({ clientId: 'gatehouse-orchestrator', clientSecret: 'orchestrator-local-only-secret' });

/**
 * The executors' client of the local realm, for token exchange (RFC 8693): the policy service and the
 * MCP front door keep people's tokens that name it, executors exchange them. Local-only secret.
 */
const LOCAL_EXCHANGE = Object.freeze({
  GATEHOUSE_EXCHANGE_CLIENT_ID: 'gatehouse-executor',
  GATEHOUSE_EXCHANGE_CLIENT_SECRET: 'executor-local-only-secret',
});

/**
 * The executors' sealing pair (X25519), fresh per start as the signing pairs are: the policy service
 * and the MCP front door keep people's tokens in Redis only sealed to its public half
 * (GATEHOUSE_SEALING_KEYS), and only executors hold the private half that opens them
 * (GATEHOUSE_UNSEALING_KEYS). What a start sealed, the next start's executors cannot open: the person
 * signs in again, as after any restart of the IdP's dev-mode sessions.
 */
const SEALING = localPair('sealing', 'x25519');

/**
 * What a service of `kind` needs from the local identity provider: the console's client, or the issuer
 * trusted code's tokens come from. The MCP front door's agent policy names the reference pack's roles,
 * so it is given only when the services host that pack.
 */
function identityEnv(kind, pack) {
  if (kind === 'approval') return LOCAL_IDENTITY;
  const exchangeClient = {
    GATEHOUSE_EXCHANGE_CLIENT_ID: LOCAL_EXCHANGE.GATEHOUSE_EXCHANGE_CLIENT_ID,
    GATEHOUSE_SEALING_KEYS: SEALING.publicKey,
  };
  if (kind === 'policy') return { GATEHOUSE_OIDC_ISSUER: LOCAL_IDENTITY.GATEHOUSE_OIDC_ISSUER, ...exchangeClient };
  if (kind === 'executor') {
    return {
      GATEHOUSE_OIDC_ISSUER: LOCAL_IDENTITY.GATEHOUSE_OIDC_ISSUER,
      ...LOCAL_EXCHANGE,
      GATEHOUSE_SEALING_KEYS: SEALING.publicKey,
      GATEHOUSE_UNSEALING_KEYS: SEALING.signingKey, // the private half
    };
  }
  // People sign in through their MCP client; the realm's gatehouse.mcp scope names this URL as audience.
  if (kind === 'mcp') {
    return {
      GATEHOUSE_OIDC_ISSUER: LOCAL_IDENTITY.GATEHOUSE_OIDC_ISSUER,
      ...exchangeClient,
      ...(pack === REFERENCE_PACK
        ? { MCP_AGENT_POLICY_FILE: fileURLToPath(new URL('../examples/customer-support/pack/config/agent-policy.json', import.meta.url)) }
        : {}),
      MCP_PUBLIC_URL: `http://127.0.0.1:${process.env.MCP_PORT ?? 8095}`,
    };
  }
  return {};
}

/** The signing keys a service of `kind` is started with, if it signs; the key set a system of record checks calls with. */
function signingEnv(kind) {
  if (kind === 'customers') return { CUSTOMERS_ASSERTION_KEYS: writeAssertionJwks() };
  // The MCP front door proves its clients' commands with its own key; the policy service trusts its public half.
  if (kind === 'mcp') return { MCP_SIGNING_KEY: FRONT_DOOR.signingKey };
  const pair = PAIRS[kind];
  if (pair === undefined) return {};
  if (kind === 'policy') return { GATEHOUSE_SIGNING_KEY: pair.signingKey, GATEHOUSE_MCP_KEYS: FRONT_DOOR.publicKey };
  return kind === 'executor'
    ? { GATEHOUSE_SIGNING_KEY: pair.signingKey, GATEHOUSE_ASSERTION_KEY: ASSERTION.signingKey }
    : { GATEHOUSE_SIGNING_KEY: pair.signingKey };
}

/** The tool pack `npm start` and the demo host by default: the reference domain. */
export const REFERENCE_PACK = '@gatehouse/example-customer-support';

/** Service name → entrypoint and the log message that says it is ready. */
export const SERVICES = {
  customers: {
    main: 'examples/customer-support/customers/dist/main.js',
    ready: 'customers service listening',
    url: (env) => `http://127.0.0.1:${env.CUSTOMERS_PORT ?? 8090}`,
  },
  policy: {
    main: 'services/policy/dist/main.js',
    ready: 'policy service ready',
    url: (env) => `http://127.0.0.1:${env.POLICY_PORT ?? 8091}`,
  },
  approval: {
    main: 'services/approval/dist/main.js',
    ready: 'approval service ready',
    url: (env) => `http://127.0.0.1:${env.APPROVAL_PORT ?? 8093}`,
  },
  executor: { main: 'services/executor/dist/main.js', ready: 'executor ready', url: () => null },
  mcp: { main: 'services/mcp/dist/main.js', ready: 'mcp front door ready', url: (env) => `http://127.0.0.1:${env.MCP_PORT ?? 8095}/mcp` },
};

/** @typedef {import('node:child_process').ChildProcess} ChildProcess */
/** @typedef {{ env: Record<string,string>, logsDir?: string, say?: (line: string) => void, timeoutMs?: number, detached?: boolean }} LaunchOptions */

/**
 * Starts one instance ("executor-2" runs the executor; its EXECUTOR_ID stays `executor-2-<our pid>`
 * however often it is started). `ready` resolves when it logs its ready message, and rejects if it
 * exits first or is not ready within timeoutMs (then it is left running: the caller decides).
 * `detached` puts it in its own process group, so a Ctrl-C at the terminal reaches only us.
 * @param {string} instance
 * @param {LaunchOptions} options
 * @returns {{ child: ChildProcess, ready: Promise<void> }}
 */
export function launch(instance, { env, logsDir = join(root, '.stack', 'logs'), say = () => {}, timeoutMs = 90_000, detached = false }) {
  const kind = instance.replace(/-\d+$/, '');
  const service = SERVICES[kind];
  if (service === undefined) throw new Error(`unknown service ${instance}`);
  mkdirSync(logsDir, { recursive: true });
  const logFile = join(logsDir, `${instance}.log`);
  const started = Date.now();
  const log = createWriteStream(logFile, { flags: 'a' });
  // The services host the reference tool pack unless GATEHOUSE_TOOL_PACK names another.
  const pack = env.GATEHOUSE_TOOL_PACK ?? process.env.GATEHOUSE_TOOL_PACK ?? REFERENCE_PACK;
  const child = spawn(process.execPath, [service.main], {
    cwd: root,
    env: {
      GATEHOUSE_TOOL_PACK: REFERENCE_PACK,
      ...identityEnv(kind, pack),
      ...process.env,
      ...PUBLIC_KEYS,
      ...signingEnv(kind),
      ...env,
      ...(kind === 'executor' ? { EXECUTOR_ID: `${instance}-${process.pid}` } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });
  child.stderr.pipe(log, { end: false });
  // The last lines a service wrote before it died name the reason; the error carries them.
  let last = '';
  const keep = (chunk) => (last = (last + chunk.toString('utf8')).slice(-2048));
  child.stderr.on('data', keep);
  const ready = /** @type {Promise<void>} */ (
    new Promise((resolve, reject) => {
      let buffered = '';
      let isReady = false;
      const timer = setTimeout(() => reject(new Error(`${instance} not ready within ${timeoutMs} ms; see ${logFile}`)), timeoutMs);
      child.stdout.on('data', (chunk) => {
        log.write(chunk);
        if (isReady) return;
        keep(chunk);
        buffered = (buffered + chunk.toString('utf8')).slice(-8192);
        if (!buffered.includes(service.ready)) return;
        isReady = true;
        clearTimeout(timer);
        const url = service.url(env);
        say(`${instance.padEnd(10)} ready   ${`${((Date.now() - started) / 1000).toFixed(1)}s`.padEnd(6)} ${url ?? `pid ${child.pid}`}`);
        resolve();
      });
      // 'close' comes after the child's output is read to the end, so the tail is complete.
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        log.end();
        if (isReady) return;
        const tail = last
          .split('\n')
          .filter((line) => line.trim() !== '' && !/^\s+at /.test(line))
          .slice(-6)
          .map((line) => `   | ${line.slice(0, 400)}`)
          .join('\n');
        reject(new Error(`${instance} exited (${code ?? signal}) before it was ready; see ${logFile}${tail === '' ? '' : `\n${tail}`}`));
      });
    })
  );
  return { child, ready };
}

/**
 * Sends SIGTERM and waits for the exit; SIGKILL after graceMs. Resolves true if it had to kill.
 * @param {ChildProcess | null} child
 * @param {number} graceMs
 * @returns {Promise<boolean>}
 */
export function stopChild(child, graceMs) {
  return new Promise((resolve) => {
    if (child === null || child.exitCode !== null || child.signalCode !== null) return resolve(false);
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(killed);
    });
    child.kill('SIGTERM');
  });
}

/**
 * @param {{ names: string[], env: Record<string,string>, logsDir?: string, say?: (line: string) => void, timeoutMs?: number }} options
 */
export async function startServices({ names, env, logsDir = join(root, '.stack', 'logs'), say = () => {}, timeoutMs = 90_000 }) {
  const children = [];
  const stop = async () => {
    await Promise.all(children.map((c) => stopChild(c, 15_000)));
  };
  try {
    await Promise.all(
      names.map((instance) => {
        const { child, ready } = launch(instance, { env, logsDir, say, timeoutMs });
        children.push(child);
        return ready;
      }),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { children, stop };
}
