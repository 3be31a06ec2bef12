import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { ConfigResourceTypes, Kafka } from 'kafkajs';
import { config, PARTITIONS } from './stack.js';

/** Versions of the stack: the servers are the ones deploy/local pins. */
const STACK_VERSIONS = { kafka: '4.4.0', apicurioRegistry: '3.3.3' } as const;

/** ConfigResourceTypes.BROKER: kafkajs is CommonJS and its enums are not named ESM exports. */
const BROKER_RESOURCE = 4 as ConfigResourceTypes;

/** Broker settings that shape throughput and latency, read from the broker itself. */
const BROKER_KEYS = [
  'num.network.threads',
  'num.io.threads',
  'num.partitions',
  'default.replication.factor',
  'min.insync.replicas',
  'log.flush.interval.messages',
  'log.flush.interval.ms',
  'log.segment.bytes',
  'socket.send.buffer.bytes',
  'socket.receive.buffer.bytes',
  'message.max.bytes',
  'group.initial.rebalance.delay.ms',
  'compression.type',
] as const;

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryMiB: number;
  readonly node: string;
  readonly platform: string;
  readonly kernel: string;
}

export function machine(): Machine {
  let kernel = '';
  try {
    kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  } catch {
    kernel = 'unknown';
  }
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryMiB: Math.round(totalmem() / 1024 / 1024),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    kernel,
  };
}

export function versions(): Record<string, string> {
  const require = createRequire(import.meta.url);
  const versionOf = (name: string): string => {
    try {
      return (require(`${name}/package.json`) as { version: string }).version;
    } catch {
      return 'unknown';
    }
  };
  return {
    kafkajs: versionOf('kafkajs'),
    '@platformatic/kafka': platformaticVersion(),
    avsc: versionOf('avsc'),
    ioredis: versionOf('ioredis'),
    kafka: STACK_VERSIONS.kafka,
    apicurioRegistry: STACK_VERSIONS.apicurioRegistry,
  };
}

/** Its exports map hides package.json: read the one beside the entry point (dist/index.js). */
function platformaticVersion(): string {
  try {
    const entry = createRequire(import.meta.url).resolve('@platformatic/kafka');
    return (JSON.parse(readFileSync(new URL('../package.json', pathToFileURL(entry)), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export interface BrokerSettings {
  readonly brokers: readonly string[];
  readonly nodeIds: readonly number[];
  readonly config: Readonly<Record<string, string>>;
  readonly benchTopics: { readonly partitions: number; readonly replicationFactor: number };
}

export async function brokerSettings(kafka: Kafka): Promise<BrokerSettings> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const cluster = await admin.describeCluster();
    const nodeIds = cluster.brokers.map((b) => b.nodeId);
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: BROKER_RESOURCE, name: String(nodeIds[0] ?? 1), configNames: [...BROKER_KEYS] }],
    });
    const entries: Record<string, string> = {};
    for (const entry of described.resources[0]?.configEntries ?? []) entries[entry.configName] = entry.configValue;
    return {
      brokers: config.brokers,
      nodeIds,
      config: entries,
      benchTopics: { partitions: PARTITIONS, replicationFactor: config.topicSettings.replicationFactor },
    };
  } finally {
    await admin.disconnect();
  }
}
