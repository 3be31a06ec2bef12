// Surface: the schema registry's HTTP API (docs/threat-model.md, "X1"). The attacker: an agent runtime,
// which looks schemas up there and so reaches the API, and holds the agent Kafka principal (Write on
// gatehouse.commands). The registry has no authentication of its own here. The promise: deleting or
// replacing subjects changes nothing a running service reads or writes (each writes, and reads its
// own events, by the id it registered at start-up), and a schema of the attacker's making reads as
// a command only if it resolves into the service's own reader schema; otherwise the record is
// dead-lettered SCHEMA_MISMATCH and nothing is claimed or answered.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DLQ_HEADER, dlqTopicOf, writeWireFormat } from '@gatehouse/events';
import { startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse } from '../support/gatehouse.js';
import { readRaw } from '../support/stack.js';

const CONTENT_TYPE = { 'content-type': 'application/vnd.schemaregistry.v1+json' };

describe('an agent runtime that can reach the schema registry’s API', () => {
  let g: Gatehouse;

  beforeAll(async () => {
    g = await startGatehouse('atk-registry');
  });
  afterAll(async () => {
    await g?.stop();
  });

  const registry = (path: string, init: RequestInit = {}): Promise<Response> => fetch(`${g.events.registryUrl}${path}`, init);
  const subjectOf = (topic: string): string => encodeURIComponent(`${topic}-value`);

  /** Registers `schema` under `subject` (the attacker's own, or one of Gatehouse's) and answers its id. */
  const register = async (subject: string, schema: object): Promise<number> => {
    const response = await registry(`/subjects/${subject}/versions`, {
      method: 'POST',
      headers: CONTENT_TYPE,
      body: JSON.stringify({ schema: JSON.stringify(schema) }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { id: number }).id;
  };

  /** A read through the real client, end to end: the answer and the customer it names. */
  const readCustomer = async (): Promise<unknown> => {
    const run = await g.createRun('support-agent');
    const answer = await g.client.call('get_customer.v1', { customer_id: 'C-1842' }, { runId: run.run_id, tenant: 'acme' });
    return answer.ok ? (answer.result as { customer_id?: string }).customer_id : answer.error.code;
  };

  it('deletes the subjects of the commands, execute and results topics for good: calls go on being decided, run and answered', async () => {
    expect(await readCustomer()).toBe('C-1842');
    for (const topic of [g.topics.commands, g.topics.execute, g.topics.results]) {
      expect((await registry(`/subjects/${subjectOf(topic)}`, { method: 'DELETE' })).status).toBe(200);
      expect((await registry(`/subjects/${subjectOf(topic)}?permanent=true`, { method: 'DELETE' })).status).toBe(200);
      expect((await registry(`/subjects/${subjectOf(topic)}/versions`)).status).toBe(404);
    }

    expect(await readCustomer()).toBe('C-1842');
  });

  it('turns the commands subject’s compatibility off and makes a breaking schema its latest version: calls go on', async () => {
    const subject = subjectOf(g.topics.commands);
    const off = await registry(`/config/${subject}`, {
      method: 'PUT',
      headers: CONTENT_TYPE,
      body: JSON.stringify({ compatibility: 'NONE' }),
    });
    expect(off.status).toBe(200);
    await register(subject, {
      type: 'record',
      name: 'ToolCommand',
      namespace: 'gatehouse',
      fields: [{ name: 'hijacked', type: 'string' }],
    });

    expect(await readCustomer()).toBe('C-1842');
  });

  it('publishes a command under a schema of its own making that does not resolve: dead-lettered SCHEMA_MISMATCH, nothing claimed', async () => {
    const schema = { type: 'record', name: 'Evil', fields: [{ name: 'command_id', type: 'int' }] };
    const id = await register(encodeURIComponent(`attacker-${randomUUID()}-value`), schema);
    const claimsBefore = await g.redis.keys(`${g.redisPrefix}cmd:*`);
    // Avro's zig-zag int 21.
    const value = writeWireFormat(id, Buffer.from([42]));
    const label = `evil-${randomUUID()}`;
    const producer = g.kafka.producer();
    await producer.connect();
    try {
      await producer.send({ topic: g.topics.commands, messages: [{ key: label, value }] });
    } finally {
      await producer.disconnect();
    }

    const dead = (await readRaw(g.kafka, dlqTopicOf(g.topics.commands), 1, 30_000)).filter((m) => m.key?.toString() === label);
    expect(dead.map((m) => m.headers?.[DLQ_HEADER.reason]?.toString())).toEqual(['SCHEMA_MISMATCH']);
    expect(await g.redis.keys(`${g.redisPrefix}cmd:*`)).toEqual(claimsBefore);
    expect(await readCustomer()).toBe('C-1842');
  });
});
