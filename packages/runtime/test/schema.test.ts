import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { eventsConfigFromEnv } from '@gatehouse/events';
import {
  eventsConfigOf,
  readConfig,
  RESERVED_PREFIXES,
  TOOLING_VARIABLES,
  VARIABLE_NAMES,
  VARIABLES,
  variablesReadBy,
} from '@gatehouse/runtime';
import type { Env, EventsVariableName } from '@gatehouse/runtime';
import { redisUrlFromEnv } from '@gatehouse/state';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EVENTS_NAMES: readonly EventsVariableName[] = [
  'KAFKA_BROKERS',
  'SCHEMA_REGISTRY_URL',
  'GATEHOUSE_TOPIC_PREFIX',
  'GATEHOUSE_TOPIC_PARTITIONS',
  'GATEHOUSE_RESULTS_PARTITIONS',
  'GATEHOUSE_TOPIC_REPLICATION',
  'GATEHOUSE_TOPIC_RETENTION_MS',
  'GATEHOUSE_DLQ_RETENTION_MS',
  'GATEHOUSE_MAX_MESSAGE_BYTES',
];

function filesUnder(dir: string, pattern: RegExp): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return filesUnder(path, pattern);
    return pattern.test(name) ? [path] : [];
  });
}

/** Reserved names that a file sets or reads: YAML keys, `name:` entries, `env.X`, `env['X']`, quoted names, `X:` keys. */
function reservedNamesIn(path: string): string[] {
  const text = readFileSync(join(ROOT, path), 'utf8');
  const name = `((?:${RESERVED_PREFIXES.join('|')})[A-Z0-9_]+)`;
  const patterns = [`env\\.${name}`, `env\\[['"]${name}['"]\\]`, `['"]${name}['"]`, `\\b${name}:`, `name: ${name}\\b`];
  return patterns.flatMap((p) => [...text.matchAll(new RegExp(p, 'g'))].map((m) => m[1] ?? ''));
}

describe('the configuration schema', () => {
  it('knows every reserved name the deployment files, scripts, test support and benchmark set or read', () => {
    const files = [
      'docker-compose.yml',
      ...filesUnder('deploy', /\.(ya?ml|mjs)$/),
      ...filesUnder('scripts', /\.mjs$/),
      ...filesUnder('test/support', /\.ts$/),
      ...filesUnder('bench/src', /\.ts$/),
    ];
    const unknown = files.flatMap((file) =>
      reservedNamesIn(file)
        .filter((n) => !Object.hasOwn(VARIABLES, n) && !Object.hasOwn(TOOLING_VARIABLES, n))
        .map((n) => `${file}: ${n}`),
    );
    expect(unknown).toEqual([]);
  });

  it('gives every variable at least one reader, a meaning, a default column and no name twice', () => {
    for (const name of VARIABLE_NAMES) {
      const variable = VARIABLES[name];
      expect(variable.readers.length, name).toBeGreaterThan(0);
      expect(variable.doc, name).not.toBe('');
      expect(variable.defaultText, name).not.toBe('');
      expect(Object.hasOwn(TOOLING_VARIABLES, name), name).toBe(false);
    }
    expect(new Set(VARIABLE_NAMES).size).toBe(VARIABLE_NAMES.length);
  });

  it('gives each service the variables whose readers name it', () => {
    expect(variablesReadBy('policy')).toContain('GATEHOUSE_PROPOSAL_TTL_MS');
    expect(variablesReadBy('executor')).toContain('GATEHOUSE_PROPOSAL_TTL_MS');
    expect(variablesReadBy('approval')).not.toContain('GATEHOUSE_PROPOSAL_TTL_MS');
    expect(variablesReadBy('policy')).not.toContain('EXECUTOR_PORT');
    for (const service of ['policy', 'executor', 'approval'] as const)
      expect(variablesReadBy(service)).toEqual(expect.arrayContaining([...EVENTS_NAMES, 'REDIS_URL', 'GATEHOUSE_REDIS_PREFIX']));
  });
});

describe('the readers that stay outside the runtime', () => {
  it.each<Env>([
    {},
    { KAFKA_BROKERS: 'k1:9092, k2:9093', SCHEMA_REGISTRY_URL: 'https://sr.internal/', GATEHOUSE_TOPIC_PARTITIONS: '24' },
    {
      GATEHOUSE_TOPIC_PREFIX: 'staging.',
      GATEHOUSE_TOPIC_REPLICATION: '3',
      GATEHOUSE_TOPIC_RETENTION_MS: '1000',
      GATEHOUSE_DLQ_RETENTION_MS: '2000',
      GATEHOUSE_MAX_MESSAGE_BYTES: '1',
    },
    { KAFKA_BROKERS: '', SCHEMA_REGISTRY_URL: '', GATEHOUSE_TOPIC_PARTITIONS: '' },
  ])('read the event settings of %j exactly as @gatehouse/events does for the client and the CLI', (env) => {
    expect(eventsConfigOf(readConfig(EVENTS_NAMES, env))).toEqual(eventsConfigFromEnv(env));
  });

  it.each<Env>([
    { KAFKA_BROKERS: 'no-port' },
    { KAFKA_BROKERS: ' , ' },
    { SCHEMA_REGISTRY_URL: 'not a url' },
    { SCHEMA_REGISTRY_URL: 'ftp://x' },
    { GATEHOUSE_TOPIC_PARTITIONS: '0' },
    { GATEHOUSE_TOPIC_PARTITIONS: '1e3' },
    { GATEHOUSE_MAX_MESSAGE_BYTES: ' 8 ' },
  ])('refuse the event settings %j in both readers', (env) => {
    expect(() => readConfig(EVENTS_NAMES, env)).toThrow(Object.keys(env)[0]);
    expect(() => eventsConfigFromEnv(env)).toThrow(Object.keys(env)[0]);
  });

  it('read REDIS_URL as @gatehouse/state does', () => {
    for (const env of [{}, { REDIS_URL: '' }, { REDIS_URL: 'rediss://:pw@redis.internal:6380/2' }]) {
      expect(readConfig(['REDIS_URL'], env).REDIS_URL).toBe(redisUrlFromEnv(env));
    }
    for (const env of [{ REDIS_URL: 'http://redis' }, { REDIS_URL: 'not a url' }]) {
      expect(() => readConfig(['REDIS_URL'], env)).toThrow(/REDIS_URL/);
      expect(() => redisUrlFromEnv(env)).toThrow(/REDIS_URL/);
    }
  });
});
