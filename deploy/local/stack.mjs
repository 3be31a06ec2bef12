#!/usr/bin/env node
// Gatehouse local stack: brings up the backing services the services and integration tests
// need, without Docker, on 127.0.0.1:
//   kafka     Apache Kafka 4.4.0, single-node KRaft, jars from Maven Central  (stack-kafka.mjs)
//   registry  Apicurio Registry 3.3.3, in-memory, Confluent-compatible API   (stack-registry.mjs)
//   redis     an already-running Redis, else `redis-server --daemonize`       (stack-services.mjs)
//   postgres  an already-running PostgreSQL, else `pg_ctlcluster ... start`   (stack-services.mjs)
//   redis-aof      a Redis of its own on 6380 with an append-only file       (stack-redis.mjs)
//   redis-cluster  a three-node Redis Cluster of its own on 7000-7002         (stack-redis.mjs)
//   keycloak  Keycloak 26.7.3, dev mode, in-memory, the project's realm      (stack-keycloak.mjs)
// and, opt-in (started only when named, for fault tests at cluster scale):
//   kafka-cluster  three Kafka 4.4.0 KRaft nodes, brokers on 29092-29094,
//                  controllers on 29193-29195, RF 3, min.insync.replicas 2  (stack-kafka-cluster.mjs)
//   redis-ha       a Redis Cluster of three masters and three replicas on 7100-7105 (stack-redis.mjs)
// Their nodes are components too, to stop and start one alone: kafka-cluster-1..3, redis-ha-7100..7105.
//
//   node deploy/local/stack.mjs up [name...] [--json] start what is not running; wait until ready
//   node deploy/local/stack.mjs down [name...]     stop what *this script* started (pid files)
//   node deploy/local/stack.mjs status [--json]    exit 0 when all are up (an opt-in component counts
//                                                  only once a node of it is ours or serves, or its variable is set)
//
// Addresses come from KAFKA_BROKERS, SCHEMA_REGISTRY_URL, REDIS_URL, REDIS_AOF_URL, REDIS_CLUSTER_URL,
// KEYCLOAK_URL, DATABASE_URL, KAFKA_CLUSTER_BROKERS and REDIS_HA_URL; a variable set explicitly means
// "external: only check it". Jars live in the cache dir (GATEHOUSE_CACHE_DIR, default ~/.cache/gatehouse);
// pids, logs, configs and Kafka and Redis data in <repo>/.stack/.
// `up --json` prints {"started":[...],"components":{...}} on stdout (human lines go to stderr)
// and writes the same to .stack/started.json so a test runner can `down` exactly what it started.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { STACK, StackError, ensureDirs, ourPid, removePid, terminate } from './stack-lib.mjs';
import { kafka } from './stack-kafka.mjs';
import { kafkaCluster } from './stack-kafka-cluster.mjs';
import { registry } from './stack-registry.mjs';
import { redis, postgres } from './stack-services.mjs';
import { redisAof, redisCluster, redisHa, redisVolatile } from './stack-redis.mjs';
import { keycloak } from './stack-keycloak.mjs';

const COMPONENTS = [postgres, redis, redisAof, redisVolatile, redisCluster, kafka, registry, keycloak, kafkaCluster, redisHa];
/** What a plain `up` starts: the opt-in components start only when named. */
const DEFAULTS = COMPONENTS.filter((c) => !c.optIn);
/** Every name `up` and `down` accept: the components, and the nodes of those made of several. */
const NAMED = [...COMPONENTS, ...COMPONENTS.flatMap((c) => c.nodes ?? [])];
const args = process.argv.slice(2);
const json = args.includes('--json');
const [command, ...names] = args.filter((a) => a !== '--json');
const out = json ? process.stderr : process.stdout; // human-readable lines

const say = (line) => out.write(`${line}\n`);
const secs = (ms) => `${(ms / 1000).toFixed(1)}s`;
/** Hide passwords in URLs before printing them. */
const shown = (address) => address.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@');
// Columns sized for the default components: an opt-in one's long address only pushes its own row.
const addrWidth = Math.max(...DEFAULTS.map((c) => shown(c.address()).length));
const nameWidth = Math.max(10, ...DEFAULTS.map((c) => c.name.length));
/** The pid of our running process for `c` (a component of several processes names one of them). */
const ownedPid = (c) => (c.ownPid ? c.ownPid() : ourPid(c.name, c.pattern));
/** name, action, version, address, rest: padded columns. */
const row = (...cols) => cols.map((c, i) => (i < cols.length - 1 ? String(c).padEnd([nameWidth, 16, 7, addrWidth][i] ?? 0) : c)).join(' ');

// ---------------------------------------------------------------- up

/** Bring one component up; resolves a result record, never rejects. */
async function upOne(c) {
  const t0 = Date.now();
  const base = { version: c.version, address: c.address() };
  const note = (msg) => say(`${c.name.padEnd(nameWidth)} ${msg}`);
  try {
    let result;
    const pid = await ownedPid(c);
    if (process.env[c.envVar]) {
      if (!(await c.probe())) throw new StackError(`${c.envVar}=${shown(c.address())} is set but not reachable.`);
      result = { action: 'external', owner: 'external' };
    } else if (pid) {
      await c.waitRunning(pid);
      result = { action: 'already running', owner: 'ours', pid };
    } else if ((await c.probe()) || (await c.probe())) {
      // Asked twice: on a loaded machine one slow answer must not make us start a second server.
      result = { action: 'external', owner: 'external' }; // the port is served by something we did not start
    } else {
      const started = await c.start(note);
      result = { action: 'started', owner: 'ours', pid: started.pid, note: started.note };
    }
    if (c.afterUp) result.note = await c.afterUp();
    return { name: c.name, ok: true, state: 'up', ...base, ...result, ms: Date.now() - t0 };
  } catch (err) {
    const error = err instanceof StackError ? err.message : (err?.stack ?? String(err));
    return { name: c.name, ok: false, state: 'down', ...base, action: 'failed', error, ms: Date.now() - t0 };
  }
}

async function up() {
  const t0 = Date.now();
  await ensureDirs();
  const pending = pick(names).map((c) => upOne(c)); // all in parallel; report in a fixed order
  const results = [];
  for (const p of pending) {
    const r = await p;
    results.push(r);
    const note = r.note ? `  (${r.note})` : '';
    say(row(r.name, r.action, r.version, shown(r.address), `${secs(r.ms)}${note}`));
  }
  const failed = results.filter((r) => !r.ok);
  const started = results.filter((r) => r.action === 'started').map((r) => r.name);
  // `ok` stays out of the report: `failed` above already says it.
  const components = Object.fromEntries(
    results.map(({ name, note, address, ...rest }) => {
      delete rest.ok;
      return [name, { ...rest, address: shown(address), ...(note && { note }) }];
    }),
  );
  const report = { started, components };
  await writeFile(join(STACK, 'started.json'), `${JSON.stringify(report, null, 2)}\n`);
  say(
    `${'total'.padEnd(nameWidth)} ${results.length - failed.length}/${results.length} up in ${secs(Date.now() - t0)}` +
      (started.length ? ` (started: ${started.join(', ')})` : ''),
  );
  for (const r of failed) say(`\n${r.name}: ${r.error}`);
  if (json) process.stdout.write(`${JSON.stringify(report)}\n`);
  return failed.length ? 1 : 0;
}

// ---------------------------------------------------------------- down

async function downOne(c) {
  const t0 = Date.now();
  const pid = await ownedPid(c);
  if (!pid) return row(c.name, 'not ours', c.version, 'nothing to stop');
  const how = c.stop ? await c.stop(pid) : await terminate(pid, c.pattern);
  await removePid(c.name);
  return row(c.name, how, c.version, `pid ${pid}`, secs(Date.now() - t0));
}

async function down() {
  // A plain `down` also stops the opt-in components, when some part of them is ours and running.
  const optIns = COMPONENTS.filter((c) => c.optIn);
  const running = await Promise.all(optIns.map((c) => ownedPid(c)));
  const selected = names.length ? pick(names) : [...DEFAULTS, ...optIns.filter((c, i) => running[i])];
  await ensureDirs();
  const lines = await Promise.all([...selected].reverse().map((c) => downOne(c)));
  lines.reverse().forEach(say);
  return 0;
}

// ---------------------------------------------------------------- status

async function statusOne(c) {
  const [pid, isUp] = await Promise.all([ownedPid(c), c.probe()]);
  // An opt-in component nobody started (none of ours, nothing serving, no address set) is not missing.
  const absent = c.optIn && !pid && !isUp && !process.env[c.envVar];
  const owner = pid ? `ours (pid ${pid})` : isUp ? 'external' : absent ? '- (opt-in)' : '-';
  return {
    name: c.name,
    state: isUp ? 'up' : 'down',
    owner,
    address: c.address(),
    ...(pid && { pid }),
    ...(c.optIn && { optIn: true }),
    counted: !absent,
  };
}

async function status() {
  await ensureDirs();
  const results = await Promise.all(COMPONENTS.map((c) => statusOne(c)));
  const allUp = results.every((r) => r.state === 'up' || !r.counted);
  const line = (...cols) => `${cols[0].padEnd(nameWidth)} ${cols[1].padEnd(6)} ${cols[2].padEnd(18)} ${cols[3]}`;
  say(line('COMPONENT', 'STATE', 'OWNER', 'ADDRESS'));
  for (const r of results) say(line(r.name, r.state, r.owner, shown(r.address)));
  if (json) {
    const components = Object.fromEntries(
      results.map(({ name, counted, ...rest }) => [name, { ...rest, address: shown(rest.address), ...(!counted && { absent: true }) }]),
    );
    process.stdout.write(`${JSON.stringify({ allUp, components })}\n`);
  }
  return allUp ? 0 : 1;
}

// ---------------------------------------------------------------- main

function pick(wanted) {
  if (!wanted.length) return DEFAULTS;
  const unknown = wanted.filter((n) => !NAMED.some((c) => c.name === n));
  if (unknown.length) {
    const nodes = COMPONENTS.filter((c) => c.nodes).map((c) => `${c.nodes[0].name}..${c.nodes.at(-1).name.split('-').pop()}`);
    throw new StackError(`unknown component(s): ${unknown.join(', ')} (known: ${[...COMPONENTS.map((c) => c.name), ...nodes].join(', ')})`);
  }
  return NAMED.filter((c) => wanted.includes(c.name));
}

const commands = { up, down, status };
try {
  if (!commands[command])
    throw new StackError('usage: node deploy/local/stack.mjs up [name...] [--json] | down [name...] | status [--json]');
  process.exitCode = await commands[command]();
} catch (err) {
  process.stderr.write(`stack: ${err instanceof StackError ? err.message : err?.stack}\n`);
  process.exitCode = 2;
}
