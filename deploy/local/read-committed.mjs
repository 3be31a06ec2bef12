#!/usr/bin/env node
// Prints every record of a topic as a read_committed subscriber sees it, read with Kafka's own
// consumer (deploy/kafka/ReadCommitted.java, run from the local stack's Kafka jars): one JSON line
// per record, key, value and headers in base64. The fault tests count the answers on
// gatehouse.results with it, a reader that owes nothing to the client Gatehouse runs on.
//
//   node deploy/local/read-committed.mjs <client.properties> <topic> [timeout-ms]
//
// client.properties holds bootstrap.servers and any security settings of the cluster.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { HERE } from './stack-lib.mjs';
import { ensureLibs, kafkaJavaArgs } from './stack-kafka.mjs';

const [properties, topic, timeoutMs = '120000'] = process.argv.slice(2);
if (properties === undefined || topic === undefined) {
  console.error('usage: node deploy/local/read-committed.mjs <client.properties> <topic> [timeout-ms]');
  process.exit(64);
}
await ensureLibs((line) => console.error(line));
const source = join(HERE, '..', 'kafka', 'ReadCommitted.java');
const child = spawn('java', ['-Xmx512m', ...kafkaJavaArgs('read-committed', source, properties, topic, timeoutMs)], {
  stdio: 'inherit',
});
child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
