// Surface: gatehouse.commands, what a command may speak for (docs/threat-model.md, "K1", finding 9).
// The attacker: an agent runtime with the agent Kafka principal (it writes commands and reads
// results) and its own run, a read-only one, and the run id of another run of its tenant, which it
// read off the results topic. The promise: a command speaks for the run it names only when it proves
// it, with that run's key or an MCP front door's; one that does not is never answered, claimed or
// ordered, and is kept in the commands DLQ for operators.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_PROOF_HEADER, COMMAND_PROVER_HEADER, DLQ_HEADER, dlqTopicOf, EventPublisher, RunKey } from '@gatehouse/events';
import type { ToolCommand } from '@gatehouse/events';
import { CONTROL_TOKEN, startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse, RegisteredRun } from '../support/gatehouse.js';
import { recordResults } from '../support/results.js';
import type { ResultLog } from '../support/results.js';
import { proofFor } from '../support/signing.js';
import { readRaw } from '../support/stack.js';

describe('an agent runtime that sends commands in the name of another run of its tenant', () => {
  let g: Gatehouse;
  let own: RegisteredRun;
  let victim: RegisteredRun;
  let results: ResultLog;
  let publisher: EventPublisher;
  let orders: Awaited<ReturnType<Gatehouse['watchOrders']>>;
  const forgedIds: string[] = [];

  beforeAll(async () => {
    g = await startGatehouse('atk-proof', { executors: 1 });
    own = await g.createRun('support-readonly');
    victim = await g.createRun('support-agent');
    results = await recordResults(g);
    publisher = await EventPublisher.connect(g.kafka, g.serde);
    orders = await g.watchOrders();
  });
  afterAll(async () => {
    await orders?.stop();
    await publisher?.disconnect();
    await results?.stop();
    await g?.stop();
  });

  const command = (run: { run_id: string; tenant: string }, tool: string, args: unknown): ToolCommand => {
    const now = Date.now();
    return {
      schema_version: 1,
      command_id: `atk-${randomUUID()}`,
      run_id: run.run_id,
      tenant: run.tenant,
      tool,
      arguments: JSON.stringify(args),
      sent_at: now,
      deadline_at: now + 60_000,
    };
  };

  /** The attacker's own command, proved with its own key and answered: the tenant's commands before it have been handled. */
  const drained = async (): Promise<void> => {
    const marker = command(own, 'get_customer.v1', { customer_id: 'C-1842' });
    await publisher.publish('commands', marker.tenant, marker, proofFor(own, marker));
    await results.waitFor([marker.command_id]);
  };

  const refusals = async (reason: string): Promise<number> => {
    const text = await (await fetch(`${g.policies[0]?.url ?? ''}/metrics`)).text();
    const line = new RegExp(`^gatehouse_untrusted_records_total\\{kind="commands",reason="${reason}"\\} (\\d+)`, 'm').exec(text);
    return Number(line?.[1] ?? 0);
  };

  /** Sends `forged` with `headers`, then checks it left nothing: no answer, no order, no claim in Redis, and a count under `reason`. */
  const leavesNothing = async (forged: ToolCommand, headers: Record<string, string> | undefined, reason: string): Promise<void> => {
    const before = await refusals(reason);
    forgedIds.push(forged.command_id);
    await publisher.publish('commands', forged.tenant, forged, headers);
    await drained();
    expect(results.of(forged.command_id)).toEqual([]);
    expect(orders.orders.filter((o) => o.command_id === forged.command_id)).toEqual([]);
    expect(await g.redis.keys(`${g.redisPrefix}cmd:{${forged.run_id}}:*`)).toEqual([]);
    expect(await refusals(reason)).toBe(before + 1);
  };

  it('is never answered for a write sent in the read-write run’s name with no proof', async () => {
    await leavesNothing(command(victim, 'start_customer_export.v1', { customer_id: 'C-1842', format: 'csv' }), undefined, 'unproven');
  });

  it('is never answered when it proves the command with its own run’s key instead of the named run’s', async () => {
    const forged = command(victim, 'get_customer.v1', { customer_id: 'C-2001' });
    await leavesNothing(forged, proofFor(own, forged), 'bad_proof');
  });

  it('is never answered when it poses as an MCP front door, under a key id no front door has or under the test front door’s id', async () => {
    const invented = command(victim, 'get_customer.v1', { customer_id: 'C-1842' });
    const proof = RunKey.generate().prove(invented, null)[COMMAND_PROOF_HEADER] ?? '';
    await leavesNothing(invented, { [COMMAND_PROOF_HEADER]: proof, [COMMAND_PROVER_HEADER]: 'mcp-attacker' }, 'unknown_prover');
    const posing = command(victim, 'get_customer.v1', { customer_id: 'C-1842' });
    await leavesNothing(posing, { ...proofFor(own, posing), [COMMAND_PROVER_HEADER]: 'test-mcp' }, 'bad_proof');
  });

  it('keeps every command that did not prove its run in the commands DLQ, with the reason', async () => {
    const dead = await readRaw(g.kafka, dlqTopicOf(g.topics.commands), forgedIds.length);
    const unproven = dead.filter((record) => record.headers?.[DLQ_HEADER.reason]?.toString() === 'command_unproven');
    const ids = await Promise.all(
      unproven.map(async (record) => {
        const decoded = await g.serde.decode('commands', record.value);
        return decoded.ok ? decoded.value.command_id : '';
      }),
    );
    expect(ids.sort()).toEqual([...forgedIds].sort());
  });

  it('cannot take a real call’s command_id while it is in flight: copies under it with no proof or another key leave it exactly one answer', async () => {
    const commandId = `real-${randomUUID()}`;
    const real = g.client.call('get_customer.v1', { customer_id: 'C-1842' }, { runId: victim.run_id, tenant: victim.tenant, commandId });
    const copy: ToolCommand = { ...command(victim, 'get_customer.v1', { customer_id: 'C-2001' }), command_id: commandId };
    await publisher.publish('commands', copy.tenant, copy);
    await publisher.publish('commands', copy.tenant, copy, proofFor(own, copy));
    const answer = await real;
    await drained();
    expect(answer.ok && answer.result).toMatchObject({ customer_id: 'C-1842' });
    expect(results.of(commandId)).toHaveLength(1);
    expect(orders.orders.filter((o) => o.command_id === commandId)).toHaveLength(1);
  });

  it('leaves the named run working: its own runtime’s calls, proved with its key, are answered', async () => {
    const read = await g.client.call('get_customer.v1', { customer_id: 'C-1842' }, { runId: victim.run_id, tenant: victim.tenant });
    expect(read.ok).toBe(true);
  });

  it('cannot learn a run’s key: registration shows it once, and neither the control API nor Redis keeps more than its public half', async () => {
    expect(RunKey.parse(victim.run_key).publicKey()).toBe(victim.proof_key);
    const response = await fetch(`${g.policies[0]?.url ?? ''}/runs/${victim.run_id}`, {
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    });
    expect(response.status).toBe(200);
    const shown = await response.text();
    const stored = (await g.redis.get(g.keys.run(victim.run_id))) ?? '';
    for (const text of [shown, stored]) expect(text).not.toContain(victim.run_key);
    expect(JSON.parse(stored)).toMatchObject({ proof_key: victim.proof_key });
  });
});
