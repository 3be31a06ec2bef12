import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { EventsConfig } from '@gatehouse/events';

const READER = fileURLToPath(new URL('../../deploy/local/read-committed.mjs', import.meta.url));

/** One record as Kafka's own consumer hands it to a read_committed subscriber. */
export interface CommittedRecord {
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: readonly (readonly [string, Buffer | null])[];
}

interface Line {
  partition: number;
  offset: string;
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
}

/** The Java client's settings for the brokers and principal of `config`. */
function clientProperties(config: EventsConfig): string {
  const lines = [`bootstrap.servers=${config.brokers.join(',')}`];
  const { sasl } = config;
  if (config.ssl === true) throw new Error('readCommitted: a TLS listener needs a trust store this reader is not given');
  if (sasl !== undefined) {
    const module =
      sasl.mechanism === 'plain'
        ? 'org.apache.kafka.common.security.plain.PlainLoginModule'
        : 'org.apache.kafka.common.security.scram.ScramLoginModule';
    const quoted = (text: string) => JSON.stringify(text);
    lines.push(
      'security.protocol=SASL_PLAINTEXT',
      `sasl.mechanism=${sasl.mechanism.toUpperCase()}`,
      `sasl.jaas.config=${module} required username=${quoted(sasl.username)} password=${quoted(sasl.password)};`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Every record of `topic` as a read_committed subscriber sees it, read by Kafka's own Java consumer
 * (`deploy/local/read-committed.mjs`) up to each partition's end as it stood when the read began,
 * waiting for any transaction open then. A reader independent of both clients the tests run on:
 * kafkajs hands on a record of an aborted transaction when two aborted transactions begin before it.
 */
export async function readCommitted(config: EventsConfig, topic: string, timeoutMs = 60_000): Promise<CommittedRecord[]> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-read-committed-'));
  try {
    const properties = join(dir, 'client.properties');
    await writeFile(properties, clientProperties(config), { mode: 0o600 });
    const { stdout } = await promisify(execFile)(process.execPath, [READER, properties, topic, String(timeoutMs)], {
      maxBuffer: 1024 * 1024 * 1024,
      timeout: timeoutMs + 60_000,
    });
    const bytes = (text: string | null) => (text === null ? null : Buffer.from(text, 'base64'));
    return stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const r = JSON.parse(line) as Line;
        return {
          partition: r.partition,
          offset: r.offset,
          key: bytes(r.key),
          value: bytes(r.value),
          headers: r.headers.map(([name, value]) => [Buffer.from(name, 'base64').toString('utf8'), bytes(value)] as const),
        };
      })
      .sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
