import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventPublisher, EventSerde, loadEventSchemas, topicNames } from '@gatehouse/events';
import type { EventSchemas } from '@gatehouse/events';
import { sampleEvents } from './support/sample-events.js';
import { config, freshTopics, readRaw, uniquePrefix } from './support/stack.js';
import type { TestTopics } from './support/stack.js';

interface RecordSchema {
  fields: { name: string; type: unknown; default?: unknown; doc?: string }[];
}

function withCommandFields(extra: RecordSchema['fields']): EventSchemas {
  const schemas = loadEventSchemas();
  const commands = structuredClone(schemas.commands) as RecordSchema;
  commands.fields.push(...extra);
  return { ...schemas, commands };
}

describe('schema evolution under BACKWARD compatibility', () => {
  let env: TestTopics;
  let publisher: EventPublisher | undefined;

  beforeAll(async () => {
    env = await freshTopics('evolution', 1);
  });

  afterAll(async () => {
    await publisher?.disconnect();
  });

  it('refuses a change that breaks BACKWARD compatibility', async () => {
    const breaking = new EventSerde({
      registryUrl: config.registryUrl,
      topics: env.topics,
      schemas: withCommandFields([{ name: 'priority', type: 'int', doc: 'Required with no default: old data cannot be read.' }]),
    });
    await expect(breaking.register('commands')).rejects.toMatchObject({ code: 'SCHEMA_REFUSED' });
    const versions = await fetch(`${config.registryUrl}/subjects/${encodeURIComponent(`${env.topics.commands}-value`)}/versions`);
    expect(await versions.json()).toEqual([1]);
  });

  it('accepts a new optional field, and readers on the old schema still decode the new events', async () => {
    const evolved = new EventSerde({
      registryUrl: config.registryUrl,
      topics: env.topics,
      schemas: withCommandFields([
        { name: 'client_version', type: ['null', 'string'], default: null, doc: 'Optional: old readers ignore it.' },
      ]),
    });
    const newId = await evolved.register('commands');
    expect(newId).not.toBe(env.serde.schemaId('commands'));

    publisher = await EventPublisher.connect(env.kafka, evolved);
    const event = { ...sampleEvents.commands, client_version: 'sdk/2.1' };
    await publisher.publish('commands', 'acme', event);

    const [record] = await readRaw(env.kafka, env.topics.commands, 1);
    const oldReader = await env.serde.decode('commands', record?.value ?? null);
    expect(oldReader).toEqual({ ok: true, schemaId: newId, value: sampleEvents.commands });

    const newReader = await evolved.decode('commands', record?.value ?? null);
    expect(newReader.ok && newReader.value).toEqual(event);
  });

  it('lets services that start side by side register the same schemas at once', async () => {
    // Policy, approval and executors come up together on a new prefix: every one of them sets the
    // subject's compatibility and registers its schemas; all must start, with the same ids.
    const topics = topicNames(uniquePrefix('evolution-race'));
    const serdes = Array.from({ length: 6 }, () => new EventSerde({ registryUrl: config.registryUrl, topics }));
    const ids = await Promise.all(serdes.map((serde) => serde.registerAll()));
    for (const seen of ids) expect(seen).toEqual(ids[0]);
    for (const topic of [topics.commands, topics.results]) {
      const response = await fetch(`${config.registryUrl}/config/${encodeURIComponent(`${topic}-value`)}`);
      expect(await response.json()).toMatchObject({ compatibilityLevel: 'BACKWARD' });
    }
  });
});
