#!/usr/bin/env node
// A throwaway Kafka node configured as docker-compose.yml's is: SASL/SCRAM on every listener, no
// access without an ACL, the grants of deploy/kafka/acls.txt. It runs deploy/kafka/broker.sh, as
// compose does, with compose's KAFKA_NODE_PROPERTIES (only the addresses differ) and the local
// stack's Kafka jars, on ports of its own and in a temporary directory: the stack's broker (9092) is
// never touched. test/kafka-acls.int.test.ts checks the grants on it.
//
//   node deploy/local/kafka-secure.mjs up [--port 19092] [--topic-prefix PREFIX] [--no-grants] [--json]
//   node deploy/local/kafka-secure.mjs down <dir>
//
// `up` formats a new node (clients on --port, its controller on +1, the internal listener on +2),
// waits until it answers its admin, grants acls.txt with kafkajs as the admin (compose grants the
// same file with kafka-acls.sh, deploy/kafka/apply-acls.sh) and prints its directory, pid, brokers
// and credentials file (a random password per principal, mode 0600); --json prints that as one JSON
// line. --no-grants leaves the grants out, e.g. to make them with apply-acls.sh and compare. `down`
// stops the node of that directory and deletes the directory.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import {
  CACHE,
  HERE,
  REPO,
  StackError,
  exists,
  javaMajor,
  loadKafkajs,
  logExcerpt,
  processMatches,
  spawnDetached,
  tcpProbe,
  terminate,
  waitFor,
} from './stack-lib.mjs';
import { kafka as stackKafka } from './stack-kafka.mjs';

const KAFKA_DIR = join(REPO, 'deploy', 'kafka');
const BROKER_SH = join(KAFKA_DIR, 'broker.sh');
const ACLS = join(KAFKA_DIR, 'acls.txt');
const COMPOSE = join(REPO, 'docker-compose.yml');
const LIBS = join(CACHE, `kafka-${stackKafka.version}`, 'libs');
const LOG4J = join(HERE, 'kafka', 'log4j2.properties');
const DIR_PREFIX = 'gatehouse-kafka-secure-';
const SUPER_USERS = ['gatehouse-broker', 'gatehouse-admin'];
const READY_TIMEOUT_MS = 90_000;

/** The grants of acls.txt, `{prefix}` replaced, one entry per operation; the same rules as apply-acls.sh. */
function readGrants(text, topicPrefix = '') {
  const grants = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `${ACLS}:${index + 1}`;
    const fields = line.split(/\s+/);
    if (fields.length !== 5) throw new StackError(`${where}: expected: principal type pattern name operations`);
    const [principal, type, pattern, template, operations] = fields;
    const name = template.replace('{prefix}', topicPrefix);
    if (!/^[A-Za-z0-9_-]+$/.test(principal)) throw new StackError(`${where}: principal ${principal}: letters, digits, _ and - only`);
    if (!['topic', 'group', 'transactional-id'].includes(type))
      throw new StackError(`${where}: type ${type}: topic, group or transactional-id`);
    if (pattern !== 'literal' && pattern !== 'prefixed') throw new StackError(`${where}: pattern ${pattern}: literal or prefixed`);
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new StackError(`${where}: name ${name}: letters, digits, . _ and - only`);
    if (!/^[A-Za-z]+(,[A-Za-z]+)*$/.test(operations)) throw new StackError(`${where}: operations ${operations}: names separated by commas`);
    for (const operation of operations.split(',')) grants.push({ principal, type, pattern, name, operation });
  });
  return grants;
}

/** kafka-acls.sh's operation name (DescribeConfigs) as kafkajs' enum key (DESCRIBE_CONFIGS). */
const enumKey = (name) => name.replace(/(?<=[a-z])(?=[A-Z])/g, '_').toUpperCase();

function aclEntry(kafkajs, grant) {
  const operation = kafkajs.AclOperationTypes[enumKey(grant.operation)];
  if (operation === undefined) throw new StackError(`${ACLS}: unknown operation ${grant.operation}`);
  return {
    resourceType: kafkajs.AclResourceTypes[grant.type.replace('-', '_').toUpperCase()],
    resourceName: grant.name,
    resourcePatternType: kafkajs.ResourcePatternTypes[grant.pattern.toUpperCase()],
    principal: `User:${grant.principal}`,
    host: '*',
    operation,
    permissionType: kafkajs.AclPermissionTypes.ALLOW,
  };
}

/** docker-compose.yml's KAFKA_NODE_PROPERTIES with this node's addresses in place of compose's. */
async function nodeProperties(port) {
  const { parse } = createRequire(join(REPO, 'package.json'))('yaml');
  const text = parse(await readFile(COMPOSE, 'utf8'))?.services?.kafka?.environment?.KAFKA_NODE_PROPERTIES;
  if (typeof text !== 'string') throw new StackError(`${COMPOSE}: services.kafka.environment.KAFKA_NODE_PROPERTIES is missing`);
  const local = {
    listeners: `INTERNAL://127.0.0.1:${port + 2},HOST://127.0.0.1:${port},CONTROLLER://127.0.0.1:${port + 1}`,
    'advertised.listeners': `INTERNAL://127.0.0.1:${port + 2},HOST://127.0.0.1:${port}`,
    'controller.quorum.voters': `1@127.0.0.1:${port + 1}`,
  };
  const seen = new Set();
  const lines = text
    .trim()
    .split('\n')
    .map((line) => {
      const key = line.slice(0, line.indexOf('=')).trim();
      if (!Object.hasOwn(local, key)) return line;
      seen.add(key);
      return `${key}=${local[key]}`;
    });
  const missing = Object.keys(local).filter((key) => !seen.has(key));
  if (missing.length > 0) throw new StackError(`${COMPOSE}: KAFKA_NODE_PROPERTIES sets no ${missing.join(', ')}`);
  return lines.join('\n');
}

/** Single-quoted for sh. */
const quoted = (text) => `'${text.replaceAll("'", "'\\''")}'`;

/** What broker.sh runs from $KAFKA_BIN: Kafka's two entry points on the stack's jars. */
async function writeLaunchers(dir) {
  const bin = join(dir, 'bin');
  await mkdir(bin);
  const java = (heap, main) =>
    `#!/bin/sh\nexec java ${heap} -Dlog4j2.configurationFile=${quoted(LOG4J)} -Dgatehouse.logs.dir=${quoted(join(dir, 'logs'))} ` +
    `-cp ${quoted(`${LIBS}/*`)} ${main} "$@"\n`;
  await writeFile(join(bin, 'kafka-storage.sh'), java('-Xmx256m -XX:TieredStopAtLevel=1', 'kafka.tools.StorageTool'), { mode: 0o755 });
  await writeFile(join(bin, 'kafka-server-start.sh'), java('-Xmx512m', 'kafka.Kafka'), { mode: 0o755 });
  return bin;
}

const envName = (principal) => `SCRAM_PASSWORD_${principal.toUpperCase().replaceAll('-', '_')}`;

/** Kafka cluster ids are 16 random bytes, base64url, not starting with '-'. */
function clusterId() {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function adminClient(kafkajs, brokers, password) {
  return new kafkajs.Kafka({
    clientId: 'gatehouse-kafka-secure',
    brokers: [brokers],
    logLevel: kafkajs.logLevel.NOTHING,
    sasl: { mechanism: 'scram-sha-512', username: 'gatehouse-admin', password },
    connectionTimeout: 2000,
    requestTimeout: 10_000,
    retry: { retries: 0 },
  }).admin();
}

/** Answers its admin over SASL, and its group coordinator has loaded. */
async function ready(kafkajs, brokers, password) {
  const admin = adminClient(kafkajs, brokers, password);
  try {
    await admin.connect();
    await admin.describeCluster();
    await admin.describeGroups(['gatehouse-kafka-secure-ready']);
    return true;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

async function createAcls(kafkajs, brokers, password, grants) {
  const admin = adminClient(kafkajs, brokers, password);
  await admin.connect();
  try {
    await admin.createAcls({ acl: grants.map((g) => aclEntry(kafkajs, g)) });
  } finally {
    await admin.disconnect();
  }
}

async function up({ port, topicPrefix, grant }) {
  const kafkajs = loadKafkajs();
  if (!(await exists(join(LIBS, '.gatehouse-complete')))) {
    throw new StackError(`Kafka's jars are not in ${LIBS}: run \`npm run stack:up\` once (it downloads them).`);
  }
  const major = await javaMajor('java');
  if (major < 17) throw new StackError(`Kafka ${stackKafka.version} needs Java 17+ as \`java\` on PATH (found ${major || 'none'}).`);
  for (const p of [port, port + 1, port + 2]) {
    if (await tcpProbe('127.0.0.1', p, { timeoutMs: 500 })) throw new StackError(`127.0.0.1:${p} is in use: pick other ports with --port`);
  }
  const grants = readGrants(await readFile(ACLS, 'utf8'), topicPrefix);
  const properties = await nodeProperties(port);

  const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  await mkdir(join(dir, 'logs'));
  const principals = [...new Set([...SUPER_USERS, ...grants.map((g) => g.principal)])];
  const passwords = Object.fromEntries(principals.map((p) => [p, randomBytes(24).toString('hex')]));
  const credentials = join(dir, 'credentials.json');
  await writeFile(credentials, `${JSON.stringify(passwords, null, 2)}\n`, { mode: 0o600 });

  const brokers = `127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...(process.env.JAVA_HOME === undefined ? {} : { JAVA_HOME: process.env.JAVA_HOME }),
    KAFKA_BIN: await writeLaunchers(dir),
    KAFKA_DATA_DIR: join(dir, 'data'),
    KAFKA_CONFIG_DIR: join(dir, 'config'),
    KAFKA_CLUSTER_ID: clusterId(),
    KAFKA_NODE_PROPERTIES: properties,
    ...Object.fromEntries(principals.map((p) => [envName(p), passwords[p]])),
  };
  const out = join(dir, 'logs', 'broker.out');
  const child = spawnDetached('sh', [BROKER_SH], { cwd: dir, logPath: out, env });
  await writeFile(join(dir, 'pid'), `${child.pid}\n`);
  const dead = () => {
    const e = child.exited();
    return e && `broker.sh exited (${e.error?.message ?? `code ${e.code}, signal ${e.signal}`})`;
  };
  try {
    await waitFor(() => ready(kafkajs, brokers, passwords['gatehouse-admin']), { timeoutMs: READY_TIMEOUT_MS, intervalMs: 250, dead });
    if (grant) await createAcls(kafkajs, brokers, passwords['gatehouse-admin'], grants);
  } catch (error) {
    const excerpt = `${await logExcerpt(out)}\n${await logExcerpt(join(dir, 'logs', 'kafka.log'))}`;
    await stop(dir, child.pid);
    throw new StackError(`the secured Kafka node did not come up on ${brokers}: ${error.message}\n${excerpt}`);
  }
  return { dir, pid: child.pid, brokers, credentials, topicPrefix, grants: grant ? grants.length : 0 };
}

/** Stops the node of `dir` (only a process whose command line names the directory) and deletes it. */
async function stop(dir, pid) {
  if (!basename(dir).startsWith(DIR_PREFIX)) throw new StackError(`${dir} is not a directory of this script`);
  const known = pid ?? Number.parseInt(await readFile(join(dir, 'pid'), 'utf8').catch(() => ''), 10);
  const outcome = Number.isInteger(known) && (await processMatches(known, dir)) ? await terminate(known, dir, 15_000) : 'gone';
  await rm(dir, { recursive: true, force: true });
  return outcome;
}

function option(args, name, fallback) {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const value = args[at + 1];
  if (value === undefined) throw new StackError(`${name} needs a value`);
  return value;
}

async function main(args) {
  const [command] = args;
  if (command === 'up') {
    const port = Number(option(args, '--port', '19092'));
    if (!Number.isInteger(port) || port < 1024 || port > 65_533) throw new StackError('--port must be a port from 1024 to 65533');
    const started = Date.now();
    const node = await up({ port, topicPrefix: option(args, '--topic-prefix', ''), grant: !args.includes('--no-grants') });
    if (args.includes('--json')) {
      process.stdout.write(`${JSON.stringify(node)}\n`);
    } else {
      process.stdout.write(
        `kafka-secure: up in ${((Date.now() - started) / 1000).toFixed(1)}s at ${node.brokers} (SASL_PLAINTEXT, SCRAM-SHA-512), ` +
          `${node.grants} grants of deploy/kafka/acls.txt\n  passwords: ${node.credentials}\n` +
          `  stop:      node deploy/local/kafka-secure.mjs down ${node.dir}\n`,
      );
    }
    return;
  }
  if (command === 'down' && args[1] !== undefined) {
    process.stdout.write(`kafka-secure: ${await stop(args[1])}\n`);
    return;
  }
  throw new StackError(
    'usage: node deploy/local/kafka-secure.mjs up [--port 19092] [--topic-prefix PREFIX] [--no-grants] [--json] | down <dir>',
  );
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`kafka-secure: ${error instanceof StackError ? error.message : error.stack}\n`);
  process.exitCode = 1;
});
