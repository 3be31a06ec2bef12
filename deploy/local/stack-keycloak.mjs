// Identity provider of the local stack: Keycloak (Quarkus distribution from Maven Central) in dev
// mode with an in-memory database, importing the project's realm (deploy/local/keycloak/) at every
// start, so each start has exactly the shipped tenants, groups, people and clients. It needs a
// JDK 21+, found by findJava like the registry's. The issuer is pinned with --hostname, so tokens
// name the same issuer whichever address a client used.
import { cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CACHE,
  HERE,
  LOGS,
  StackError,
  exists,
  run,
  spawnDetached,
  waitFor,
  logExcerpt,
  fileSize,
  writePid,
  removePid,
  terminate,
  processMatches,
  httpStatus,
  hostPort,
  findJava,
  mvn,
} from './stack-lib.mjs';

const VERSION = '26.7.3';
const DIR = join(CACHE, `keycloak-${VERSION}`);
const HOME = join(DIR, `keycloak-${VERSION}`);
const MARKER = join(DIR, '.gatehouse-complete');
const TARBALL = join(DIR, `keycloak-quarkus-dist-${VERSION}.tar.gz`);
const REALM_DIR = join(HERE, 'keycloak');
const LOG = join(LOGS, 'keycloak.log');
const READY_TIMEOUT_MS = 180_000;
// Quarkus' management interface (health) on a port of its own: the registry's Quarkus keeps 9000.
const MANAGEMENT_PORT = Number(process.env.KEYCLOAK_MANAGEMENT_PORT || 19000);
// Both kc.sh and the java it becomes name the distribution's folder.
const PATTERN = `keycloak-${VERSION}/`;
export const REALM = 'gatehouse';

/** Download the distribution with Maven and extract it into the cache once. */
async function ensureDist(note) {
  if (await exists(MARKER)) return;
  note(`downloading Keycloak ${VERSION} from Maven Central into ${DIR} (first run only)`);
  await rm(DIR, { recursive: true, force: true });
  await mkdir(DIR, { recursive: true });
  const res = await mvn(
    [
      'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy',
      `-Dartifact=org.keycloak:keycloak-quarkus-dist:${VERSION}:tar.gz`,
      `-DoutputDirectory=${DIR}`,
    ],
    { cwd: DIR },
  );
  if (res.code !== 0) throw new StackError(`Maven failed to fetch Keycloak:\n${(res.stdout + res.stderr).trim()}`);
  const untar = await run('tar', ['-xzf', TARBALL, '-C', DIR]);
  if (untar.code !== 0) throw new StackError(`extracting ${TARBALL} failed:\n${untar.stderr.trim()}`);
  if (!(await exists(join(HOME, 'bin', 'kc.sh')))) throw new StackError(`${TARBALL} has no keycloak-${VERSION}/bin/kc.sh`);
  await rm(TARBALL, { force: true }); // a copy stays in ~/.m2
  await writeFile(MARKER, `${VERSION}\n`);
}

/** The realm files, copied fresh where --import-realm reads them. */
async function stageRealm() {
  const target = join(HOME, 'data', 'import');
  await rm(target, { recursive: true, force: true });
  await mkdir(target, { recursive: true });
  for (const file of await readdir(REALM_DIR)) if (file.endsWith('-realm.json')) await cp(join(REALM_DIR, file), join(target, file));
}

const base = () => keycloak.address().replace(/\/+$/, '');
const discoveryUrl = () => `${base()}/realms/${REALM}/.well-known/openid-configuration`;
const probe = async () => (await httpStatus(discoveryUrl())) === 200;

async function waitReady(dead, fromOffset = 0) {
  try {
    await waitFor(probe, { timeoutMs: READY_TIMEOUT_MS, intervalMs: 300, dead });
  } catch (err) {
    throw new StackError(`Keycloak did not serve ${discoveryUrl()}: ${err.message}\n` + (await logExcerpt(LOG, fromOffset)));
  }
}

async function start(note) {
  const java = await findJava(21, 'GATEHOUSE_KEYCLOAK_JAVA_HOME').catch((err) => {
    throw new StackError(`Keycloak ${VERSION} needs a JDK 21+: ${err.message}`);
  });
  await ensureDist(note);
  await stageRealm();
  const { host, port } = hostPort(base(), 18080);
  const fromOffset = await fileSize(LOG);
  const javaHome = join(java.bin, '..', '..');
  const child = spawnDetached(
    join(HOME, 'bin', 'kc.sh'),
    [
      'start-dev',
      `--http-host=${host}`,
      `--http-port=${port}`,
      `--hostname=${base()}`,
      '--db=dev-mem',
      '--import-realm',
      '--health-enabled=true',
      `--http-management-port=${MANAGEMENT_PORT}`,
      '--cache=local',
      // A self-registered client could ask for pairwise subjects (its registration adds the mapper
      // after the registration policies run), giving a person a second `sub` that four eyes would
      // not know as theirs: the mapper is off in this IdP.
      '--spi-protocol-mapper--oidc-sha256-pairwise-sub-mapper--enabled=false',
      '--log-level=warn,org.keycloak.services:info,io.quarkus:info',
    ],
    {
      cwd: HOME,
      logPath: LOG,
      // The admin account exists only in this in-memory realm store, on loopback.
      env: {
        ...process.env,
        JAVA_HOME: javaHome,
        JAVA_OPTS_APPEND: '-Xmx512m',
        KC_BOOTSTRAP_ADMIN_USERNAME: 'admin',
        KC_BOOTSTRAP_ADMIN_PASSWORD: 'admin-local-only',
      },
    },
  );
  await writePid('keycloak', child.pid);
  const dead = () => {
    const e = child.exited();
    return e && `kc.sh exited (${e.error?.message ?? `code ${e.code}, signal ${e.signal}`})`;
  };
  try {
    await waitReady(dead, fromOffset);
  } catch (err) {
    await terminate(child.pid, PATTERN, 5000).catch(() => {});
    await removePid('keycloak');
    throw err;
  }
  return { pid: child.pid, note: `Java ${java.major}, realm ${REALM}` };
}

export const keycloak = {
  name: 'keycloak',
  version: VERSION,
  envVar: 'KEYCLOAK_URL',
  pattern: PATTERN,
  address: () => process.env.KEYCLOAK_URL || 'http://127.0.0.1:18080',
  probe,
  start,
  waitRunning: (pid) => waitReady(async () => !(await processMatches(pid, PATTERN)) && 'process exited'),
};

/** The issuer of the project's realm on the stack's Keycloak. */
export const stackIssuer = () => `${base()}/realms/${REALM}`;
