import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } from 'kafkajs';
import type { Admin, Consumer, Producer } from 'kafkajs';
import { createClient } from '@gatehouse/client';
import {
  dlqTopicOf,
  EventPublisher,
  EventSerde,
  eventsConfigFromEnv,
  KafkaAdmin,
  provisionTopics,
  replyGroupPrefix,
  RunKey,
  TOPIC_ROLES,
  topicNames,
} from '@gatehouse/events';
import type { EventsConfig, TopicSettings } from '@gatehouse/events';
import { createLogger } from '@gatehouse/telemetry';
import { testKafka } from './support/kafkajs.js';
import type { TestKafka } from './support/kafkajs.js';
import { pollUntil } from './support/poll.js';
import { sampleEvents } from './support/sample-events.js';
import { TEST_KEY_RING } from './support/signing.js';

// KafkaConnection's own layer of trust (docs/kafka-security.md), checked on real software: a throwaway broker
// configured as docker-compose.yml's (deploy/local/kafka-secure.mjs, on 19092-19094; the stack's
// broker is not touched), its grants made for a topic prefix of this run, each principal signing in
// with SCRAM-SHA-512 from the settings every Gatehouse program reads: through Gatehouse's own client
// (its admin, the agent runtime) and through kafkajs, an independent one. The agent runtime's client
// also needs the schema registry: the stack's, under this run's subjects.
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SCRIPT = 'deploy/local/kafka-secure.mjs';
const run = promisify(execFile);
const logger = createLogger('kafka-acls-test', { level: 'silent' });
const prefix = `acl-${randomBytes(4).toString('hex')}.`;
const topics = topicNames(prefix);
const settings: TopicSettings = {
  partitions: 1,
  replicationFactor: 1,
  retentionMs: 3_600_000,
  dlqRetentionMs: 3_600_000,
  maxMessageBytes: 1_048_576,
};

interface SecureNode {
  readonly dir: string;
  readonly pid: number;
  readonly brokers: string;
  readonly credentials: string;
}

let node: SecureNode | undefined;
let passwords: Readonly<Record<string, string>> = {};
const opened: Array<{ disconnect(): Promise<void> }> = [];

/** The event settings of a program that signs in as `principal`. */
function configAs(principal: string, password = passwords[principal]): EventsConfig {
  if (node === undefined || password === undefined) throw new Error(`no credentials for ${principal}`);
  return eventsConfigFromEnv({
    KAFKA_BROKERS: node.brokers,
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
    KAFKA_SASL_USERNAME: principal,
    KAFKA_SASL_PASSWORD: password,
    GATEHOUSE_TOPIC_PREFIX: prefix,
    SCHEMA_REGISTRY_URL: process.env['SCHEMA_REGISTRY_URL'],
  });
}

const kafkaAs = (principal: string, password?: string): TestKafka => testKafka(configAs(principal, password), `acl-test-${principal}`);

async function connected<T extends Admin | Producer | Consumer>(client: T): Promise<T> {
  opened.push(client);
  await client.connect();
  return client;
}

const producerAs = (principal: string): Promise<Producer> =>
  connected(kafkaAs(principal).producer({ idempotent: true, allowAutoTopicCreation: false }));
const adminAs = (principal: string): Promise<Admin> => connected(kafkaAs(principal).admin());
/** Gatehouse's own admin (as the services and scripts/provision.mjs connect it), as `principal`. */
const wireAdminAs = async (principal: string): Promise<KafkaAdmin> => {
  const admin = await KafkaAdmin.connect(kafkaAs(principal));
  opened.push({ disconnect: () => admin.close() });
  return admin;
};
const consumerAs = (principal: string, groupId: string): Promise<Consumer> =>
  connected(kafkaAs(principal).consumer({ groupId, retry: { retries: 0 } }));

/** Every error type kafkajs reports, the wrapped ones included. */
function errorTypes(error: unknown, depth = 0): string[] {
  if (typeof error !== 'object' || error === null || depth > 5) return [];
  const e = error as { type?: unknown; cause?: unknown; originalError?: unknown; errors?: unknown };
  const own = typeof e.type === 'string' ? [e.type] : [];
  const inner = [e.cause, e.originalError, ...(Array.isArray(e.errors) ? (e.errors as unknown[]) : [])];
  return [...own, ...inner.flatMap((i) => errorTypes(i, depth + 1))];
}

async function refusal(attempt: Promise<unknown>): Promise<string[]> {
  try {
    await attempt;
  } catch (error) {
    return errorTypes(error);
  }
  throw new Error('the broker allowed it');
}

/** Settles with `outcome`, or rejects naming `what` after `timeoutMs`. */
async function within<T>(outcome: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([outcome, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Joins the consumer's group on `topic` and resolves once it reads a record whose bytes contain `marker`. */
async function readOnce(consumer: Consumer, topic: string, marker: string): Promise<void> {
  let found: () => void = () => undefined;
  const seen = new Promise<void>((resolve) => (found = resolve));
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: ({ message }) => {
      if (message.value?.includes(marker) === true) found();
      return Promise.resolve();
    },
  });
  await within(seen, 30_000, `a record with ${marker} on ${topic}`);
}

/** The error a consumer crashes with when the broker refuses it. */
async function crashOf(consumer: Consumer, topic: string): Promise<unknown> {
  const crashed = new Promise<unknown>((resolve) => consumer.on(consumer.events.CRASH, (event) => resolve(event.payload.error)));
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: () => Promise.resolve() });
  return within(crashed, 20_000, `the consumer on ${topic} to be refused`);
}

/** What the broker has logged so far (its authorizer logs every denial). */
async function brokerLog(): Promise<string> {
  if (node === undefined) throw new Error('no broker');
  return readFile(`${node.dir}/logs/kafka.log`, 'utf8');
}

/** The grants of acls.txt as sorted `principal type pattern name Operation` lines, `{prefix}` kept or replaced. */
function fileGrants(text: string, topicPrefix?: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .flatMap((line) => {
      const [principal, type, pattern, name = '', operations = ''] = line.split(/\s+/);
      const resolved = topicPrefix === undefined ? name : name.replace('{prefix}', topicPrefix);
      return operations.split(',').map((op) => `${principal} ${type} ${pattern} ${resolved} ${op}`);
    })
    .sort();
}

const keyOf = (values: Record<string, string | number>, value: number): string =>
  Object.entries(values).find(([, v]) => v === value)?.[0] ?? '?';
/** kafkajs' DESCRIBE_CONFIGS as kafka-acls.sh's DescribeConfigs. */
const operationName = (key: string): string => key.toLowerCase().replace(/(^|_)([a-z])/g, (_, __: string, c: string) => c.toUpperCase());

describe('KafkaConnection ACLs of a broker configured like compose', () => {
  beforeAll(async () => {
    const { stdout } = await run(process.execPath, [SCRIPT, 'up', '--topic-prefix', prefix, '--json'], { cwd: ROOT, timeout: 80_000 });
    node = JSON.parse(stdout) as SecureNode;
    passwords = JSON.parse(await readFile(node.credentials, 'utf8')) as Record<string, string>;
    // As scripts/provision.mjs does it, as its own principal: every topic and its DLQ.
    await provisionTopics(await wireAdminAs('gatehouse-provision'), topics, settings);
  }, 90_000);

  afterAll(async () => {
    await Promise.allSettled(opened.map((client) => client.disconnect()));
    if (node === undefined) return;
    await run(process.execPath, [SCRIPT, 'down', node.dir], { cwd: ROOT, timeout: 30_000 });
    // The broker is gone (a process that is gone, or a zombie, has no command line).
    expect(await readFile(`/proc/${node.pid}/cmdline`, 'utf8').catch(() => '')).not.toContain(node.dir);
  }, 40_000);

  it('holds exactly the grants of deploy/kafka/acls.txt, the ones apply-acls.sh makes and docs/kafka-security.md lists', async () => {
    const text = await readFile(`${ROOT}deploy/kafka/acls.txt`, 'utf8');
    const admin = await adminAs('gatehouse-admin');
    const { resources } = await admin.describeAcls({
      resourceType: AclResourceTypes.ANY,
      resourcePatternType: ResourcePatternTypes.ANY,
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    });
    const onBroker = resources.flatMap((r) =>
      r.acls.map((acl) => {
        expect([acl.host, acl.permissionType]).toEqual(['*', AclPermissionTypes.ALLOW]);
        const type = keyOf(AclResourceTypes, r.resourceType).toLowerCase().replace('_', '-');
        const pattern = keyOf(ResourcePatternTypes, r.resourcePatternType).toLowerCase();
        return `${acl.principal.replace(/^User:/, '')} ${type} ${pattern} ${r.resourceName} ${operationName(keyOf(AclOperationTypes, acl.operation))}`;
      }),
    );
    expect(onBroker.sort()).toEqual(fileGrants(text, prefix));
    // broker-security.properties is in force: no ACL means no access, and only these two are super users.
    expect(await brokerLog()).toContain('set super.users=User:gatehouse-broker,User:gatehouse-admin, default result=DENIED');

    // compose's kafka-acls service runs apply-acls.sh: the kafka-acls.sh calls it would make.
    const { stdout } = await run('sh', ['deploy/kafka/apply-acls.sh', '--print', '--topic-prefix', prefix], { cwd: ROOT });
    const planned = stdout
      .trim()
      .split('\n')
      .flatMap((call) => {
        const principal = /--allow-principal User:(\S+)/.exec(call)?.[1];
        const pattern = /--resource-pattern-type (\S+)/.exec(call)?.[1];
        const operations = [...call.matchAll(/--operation (\S+)/g)].map((m) => m[1]);
        const named = [...call.matchAll(/--(topic|group|transactional-id) (\S+)/g)].map((m) => `${m[1]} ${pattern} ${m[2]}`);
        return named.flatMap((resource) => operations.map((op) => `${principal} ${resource} ${op}`));
      });
    expect(planned.sort()).toEqual(fileGrants(text, prefix));

    const doc = await readFile(`${ROOT}docs/kafka-security.md`, 'utf8');
    const table = /<!-- kafka-acls:start -->\n([\s\S]*?)<!-- kafka-acls:end -->/.exec(doc)?.[1] ?? '';
    const listed = table
      .split('\n')
      .slice(2)
      .filter((row) => row.startsWith('|'))
      .flatMap((row) => {
        const [principal, type, name, pattern, operations = ''] = row
          .split('|')
          .slice(1, 6)
          .map((cell) => cell.trim().replaceAll('`', ''));
        return operations.split(',').map((op) => `${principal} ${type} ${pattern} ${name} ${op}`);
      });
    expect(listed.sort()).toEqual(fileGrants(text));
  });

  it('lets provisioning create the Gatehouse topics and nothing else', async () => {
    const present = await (await adminAs('gatehouse-admin')).listTopics();
    for (const role of TOPIC_ROLES) expect(present).toEqual(expect.arrayContaining([topics[role], dlqTopicOf(topics[role])]));
    const provision = await adminAs('gatehouse-provision');
    expect(await refusal(provision.createTopics({ topics: [{ topic: `other.${randomUUID()}`, numPartitions: 1 }] }))).toContain(
      'TOPIC_AUTHORIZATION_FAILED',
    );
  });

  it.each(['gatehouse-policy', 'gatehouse-approval', 'gatehouse-executor'])(
    'lets %s check every topic at start without creating any',
    async (principal) => {
      const result = await provisionTopics(await wireAdminAs(principal), topics, settings);
      expect(result.created).toEqual([]);
      expect(result.existing).toHaveLength(TOPIC_ROLES.length * 2);
    },
  );

  it.each(['gatehouse-agent', 'gatehouse-mcp'])('lets %s run a client that sends a call the policy service reads', async (principal) => {
    const client = await createClient({
      config: configAs(principal),
      topics,
      clientId: `acl-test-${principal}`,
      logger,
      defaultTimeoutMs: 1_000,
      resultKeys: TEST_KEY_RING,
    });
    try {
      const commandId = randomUUID();
      // No policy service runs here, so the call ends at its deadline; what matters is where it went.
      await client.call(
        'get_customer.v1',
        { customer_id: 'c-1' },
        { runId: 'run-acl', runKey: RunKey.generate(), tenant: 'acme', commandId, timeoutMs: 1_000 },
      );
      const policy = await consumerAs('gatehouse-policy', `${prefix}gatehouse-policy`);
      await readOnce(policy, topics.commands, commandId);
      await policy.disconnect();
    } finally {
      await client.close();
    }
  });

  it.each(['gatehouse-agent', 'gatehouse-mcp'])('refuses %s every write but commands, and every read of commands', async (principal) => {
    const producer = await producerAs(principal);
    const sent = await producer.send({ topic: topics.commands, acks: -1, messages: [{ key: 'acme', value: `command-${randomUUID()}` }] });
    expect(sent[0]?.errorCode).toBe(0);
    for (const topic of [topics.execute, topics.results, topics.operator]) {
      expect(await refusal(producer.send({ topic, acks: -1, messages: [{ key: 'acme', value: 'forged' }] })), topic).toContain(
        'TOPIC_AUTHORIZATION_FAILED',
      );
    }
    const reader = await consumerAs(principal, `${replyGroupPrefix(topics.results)}0-${randomUUID()}`);
    expect(errorTypes(await crashOf(reader, topics.commands))).toContain('TOPIC_AUTHORIZATION_FAILED');
  });

  it('carries an order from the policy principal through the executor to an agent runtime’s reply group', async () => {
    const order = `order-${randomUUID()}`;
    const result = `result-${randomUUID()}`;
    await (await producerAs('gatehouse-policy')).send({ topic: topics.execute, acks: -1, messages: [{ key: 'acme', value: order }] });

    await readOnce(await consumerAs('gatehouse-executor', `${prefix}gatehouse-executor`), topics.execute, order);
    await (await producerAs('gatehouse-executor')).send({ topic: topics.results, acks: -1, messages: [{ key: 'run-1', value: result }] });
    await readOnce(await consumerAs('gatehouse-agent', `${replyGroupPrefix(topics.results)}0-${randomUUID()}`), topics.results, result);

    // The autoscaler reads the executors' lag and nothing else.
    const autoscaler = await adminAs('gatehouse-autoscaler');
    const lag = await autoscaler.fetchOffsets({ groupId: `${prefix}gatehouse-executor`, topics: [topics.execute] });
    expect(lag).toEqual([{ topic: topics.execute, partitions: [expect.objectContaining({ partition: 0 })] }]);
    expect(await refusal(autoscaler.fetchTopicOffsets(topics.results))).toContain('TOPIC_AUTHORIZATION_FAILED');
  });

  it('lets an executor publish in transactions under its own ids, and refuses those ids to every other principal', async () => {
    // As the executor's runtime names them: the topic prefix, its client id, a part of its process (then a broker and a lane).
    const id = `${prefix}gatehouse-executor-e1-${randomBytes(4).toString('hex')}`;
    const serde = new EventSerde({ registryUrl: configAs('gatehouse-executor').registryUrl, topics });
    await serde.registerAll();
    const publisher = await EventPublisher.connect(kafkaAs('gatehouse-executor'), serde, undefined, { transactionalId: id });
    opened.push({ disconnect: () => publisher.disconnect() });
    const answer = { ...sampleEvents.results, command_id: randomUUID() };
    await publisher.publish('results', answer.run_id, answer, undefined, () => Promise.resolve(true));
    // Another principal that takes an executor's id could fence its producer (every answer in
    // flight aborted) or end its open transaction: the broker refuses it the id, whatever follows it.
    for (const principal of ['gatehouse-agent', 'gatehouse-mcp', 'gatehouse-approval', 'gatehouse-policy', 'gatehouse-subscriber']) {
      for (const taken of [id, `${id}~1~0`]) {
        const intruder = await connected(kafkaAs(principal).producer({ transactionalId: taken, idempotent: true, maxInFlightRequests: 1 }));
        // Refused at its first step, finding the id's coordinator (kafkajs reports a coordinator it
        // could not find; the broker says why).
        await expect(intruder.transaction(), `${principal} as ${taken}`).rejects.toMatchObject({ name: 'KafkaJSGroupCoordinatorNotFound' });
        const denial = `User:${principal} is Denied operation = DESCRIBE from host = 127.0.0.1 on resource = TransactionalId:LITERAL:${taken} for request = FindCoordinator`;
        await pollUntil(async () => ((await brokerLog()).includes(denial) ? true : undefined), 10_000, `the broker to log ${denial}`);
      }
    }
  });

  it('keeps an agent runtime out of the executors’ consumer group', async () => {
    const intruder = await consumerAs('gatehouse-agent', `${prefix}gatehouse-executor`);
    // kafkajs reports the refused FindCoordinator as a coordinator it could not find; the broker says why.
    expect(await crashOf(intruder, topics.results)).toMatchObject({ name: 'KafkaJSGroupCoordinatorNotFound' });
    const denial = `User:gatehouse-agent is Denied operation = DESCRIBE from host = 127.0.0.1 on resource = Group:LITERAL:${prefix}gatehouse-executor for request = FindCoordinator`;
    await pollUntil(async () => ((await brokerLog()).includes(denial) ? true : undefined), 10_000, 'the broker to log the denial');
  });

  it('refuses a principal with a wrong password', async () => {
    const admin = kafkaAs('gatehouse-executor', 'not-the-password').admin();
    await expect(admin.connect()).rejects.toMatchObject({ name: 'KafkaJSSASLAuthenticationError' });
  });
});
