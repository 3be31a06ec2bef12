// Schema registry component of the local stack: Apicurio Registry 3.3.3 (Quarkus app from Maven
// Central, in-memory storage), serving the Confluent-compatible API at /apis/ccompat/v7.
// It is compiled for Java 21, so it runs on a JDK 21+ found by findJava (java on PATH may be 17).
import { mkdir, writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CACHE,
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

const VERSION = '3.3.3';
const DIR = join(CACHE, `apicurio-${VERSION}`);
const APP = join(DIR, 'app');
const MARKER = join(APP, '.gatehouse-complete');
const TARBALL = join(DIR, `apicurio-registry-app-${VERSION}-all.tar.gz`);
const LOG = join(LOGS, 'registry.log');
const READY_TIMEOUT_MS = 90_000;
const PATTERN = 'quarkus-run.jar';

/** Download the `all` tar.gz with Maven and extract it into the cache once. */
async function ensureApp(note) {
  if (await exists(MARKER)) return;
  note(`downloading Apicurio Registry ${VERSION} from Maven Central into ${DIR} (first run only)`);
  await rm(APP, { recursive: true, force: true });
  await mkdir(APP, { recursive: true });
  const res = await mvn(
    [
      'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy',
      `-Dartifact=io.apicurio:apicurio-registry-app:${VERSION}:tar.gz:all`,
      `-DoutputDirectory=${DIR}`,
    ],
    { cwd: DIR },
  );
  if (res.code !== 0) throw new StackError(`Maven failed to fetch Apicurio Registry:\n${(res.stdout + res.stderr).trim()}`);
  const untar = await run('tar', ['-xzf', TARBALL, '-C', APP]);
  if (untar.code !== 0) throw new StackError(`extracting ${TARBALL} failed:\n${untar.stderr.trim()}`);
  if (!(await exists(join(APP, 'quarkus-run.jar')))) throw new StackError(`${TARBALL} has no quarkus-run.jar`);
  await rm(TARBALL, { force: true }); // a copy stays in ~/.m2
  await writeFile(MARKER, `${VERSION}\n`);
}

const subjectsUrl = () => `${registry.address().replace(/\/+$/, '')}/subjects`;
const probe = async () => (await httpStatus(subjectsUrl())) === 200;

async function waitReady(dead, fromOffset = 0) {
  try {
    await waitFor(probe, { timeoutMs: READY_TIMEOUT_MS, intervalMs: 300, dead });
  } catch (err) {
    throw new StackError(
      `Apicurio Registry did not become ready at ${subjectsUrl()}: ${err.message}\n` + (await logExcerpt(LOG, fromOffset)),
    );
  }
}

async function start(note) {
  const java = await findJava(21, 'GATEHOUSE_REGISTRY_JAVA_HOME').catch((err) => {
    throw new StackError(`Apicurio Registry ${VERSION} is compiled for Java 21 and needs a JDK 21+: ${err.message}`);
  });
  await ensureApp(note);
  const { host, port } = hostPort(registry.address(), 8081);
  const fromOffset = await fileSize(LOG);
  const child = spawnDetached(
    java.bin,
    [
      '-Xmx512m',
      `-Dquarkus.http.port=${port}`,
      `-Dquarkus.http.host=${host}`,
      // Quarkus' management interface (health/metrics) defaults to 0.0.0.0:9000; keep it on loopback.
      '-Dquarkus.management.host=127.0.0.1',
      '-jar',
      'quarkus-run.jar',
    ],
    { cwd: APP, logPath: LOG },
  );
  await writePid('registry', child.pid);
  const dead = () => {
    const e = child.exited();
    return e && `java exited (${e.error?.message ?? `code ${e.code}, signal ${e.signal}`})`;
  };
  try {
    await waitReady(dead, fromOffset);
  } catch (err) {
    await terminate(child.pid, PATTERN, 5000).catch(() => {});
    await removePid('registry');
    throw err;
  }
  return { pid: child.pid, note: `Java ${java.major}` };
}

export const registry = {
  name: 'registry',
  version: VERSION,
  envVar: 'SCHEMA_REGISTRY_URL',
  pattern: PATTERN,
  address: () => process.env.SCHEMA_REGISTRY_URL || 'http://127.0.0.1:8081/apis/ccompat/v7',
  probe,
  start,
  waitRunning: (pid) => waitReady(async () => !(await processMatches(pid, PATTERN)) && 'process exited'),
};
