// Surface: gatehouse.results, read (docs/threat-model.md, "K7"). The attacker: an agent runtime of
// another tenant, which holds the agent Kafka principal and so Read on the whole results topic, as
// every agent runtime must to get its own answers. What it learns there is not secret: as
// docs/kafka-security.md says, one deployment's results topic shows every tenant's answers (a
// deployment that must keep tenants apart runs one Gatehouse per tenant, or gives agents MCP, whose
// front door reads the topic for them). The promise tested here: an answer carries no credential,
// no proof and no key of the run it answers, nothing the reader could act with.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_PROOF_HEADER, COMMAND_PROVER_HEADER, RUN_PROOF_HEADER } from '@gatehouse/events';
import { startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse } from '../support/gatehouse.js';
import { readRaw } from '../support/stack.js';

describe('an agent runtime of another tenant reading every record of gatehouse.results', () => {
  let g: Gatehouse;

  beforeAll(async () => {
    g = await startGatehouse('atk-results');
  });
  afterAll(async () => {
    await g?.stop();
  });

  it('sees the other tenant’s answers, as documented, but no token, assertion, proof or run key in any value or header', async () => {
    const victim = await g.createRun('support-agent', { tenant: 'acme' });
    const read = await g.client.call('get_customer.v1', { customer_id: 'C-1842' }, { runId: victim.run_id, tenant: 'acme' });
    expect(read.ok).toBe(true);
    const refused = await g.client.call('get_customer.v1', { customer_id: 'C-0000' }, { runId: victim.run_id, tenant: 'acme' });
    expect(refused.ok).toBe(false);

    const records = await readRaw(g.kafka, g.topics.results, 2, 30_000);
    const texts = records.map((record) => ({
      value: record.value?.toString('latin1') ?? '',
      headers: Object.entries(record.headers ?? {}).map(([name, value]) => [name, String(value)] as const),
    }));

    // What the documentation says the reader sees: the victim run's answers, customer and all.
    expect(texts.filter((text) => text.value.includes(victim.run_id))).toHaveLength(2);
    expect(texts.some((text) => text.value.includes('C-1842'))).toBe(true);
    // And nothing it could act with.
    const privateKey = Buffer.from(victim.run_key, 'base64');
    for (const text of texts) {
      expect(text.value).not.toMatch(/eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/);
      expect(text.value).not.toContain(victim.run_key);
      expect(Buffer.from(text.value, 'latin1').includes(privateKey.subarray(privateKey.length - 32))).toBe(false);
      for (const [name, value] of text.headers) {
        expect([COMMAND_PROOF_HEADER, COMMAND_PROVER_HEADER, RUN_PROOF_HEADER, 'authorization']).not.toContain(name);
        expect(value).not.toMatch(/eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/);
        expect(value).not.toContain(victim.run_key);
      }
    }
  });
});
