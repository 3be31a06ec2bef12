// Surface: gatehouse.commands, written by an agent runtime (docs/threat-model.md, "K3"). The
// attacker: anyone holding the agent Kafka principal, sending as many commands as they like that
// name runs that do not exist. The promise: nothing is stored for a command until its run exists,
// so what such a sender costs is bounded per command (one read of Redis and one refusal), and
// never a day of Redis.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunKey } from '@gatehouse/events';
import { startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse } from '../support/gatehouse.js';

describe('commands naming runs that do not exist, sent by an agent runtime', () => {
  let g: Gatehouse;

  beforeAll(async () => {
    g = await startGatehouse('atk-commands');
  });
  afterAll(async () => {
    await g?.stop();
  });

  const invented = RunKey.generate();

  /** The command claims under this Gatehouse's prefix: what a command leaves in Redis. */
  const claims = async (): Promise<string[]> => g.redis.keys(`${g.redisPrefix}cmd:*`);

  it('are refused RUN_NOT_FOUND and leave nothing in Redis, however many are sent', async () => {
    const run = await g.createRun('support-agent');
    // One real call first: its claim is what a command of a run that exists leaves behind.
    const real = await g.client.call('get_customer.v1', { customer_id: 'C-1842' }, { runId: run.run_id, tenant: 'acme' });
    expect(real.ok).toBe(true);
    const before = await claims();
    expect(before.length).toBe(1);

    const COUNT = 200;
    const started = process.cpuUsage();
    const answers = await Promise.all(
      Array.from({ length: COUNT }, (_, i) =>
        g.client.call(
          'get_customer.v1',
          { customer_id: 'C-1842' },
          // Ids a run could have, and hostile ones no run can have.
          // Each proved with a key of the sender's own making: there is no run whose key it could be.
          {
            runId: i % 2 === 0 ? `run_${randomUUID()}` : `run{${'x'.repeat(300)}}${i}`,
            runKey: invented,
            tenant: 'acme',
            timeoutMs: 30_000,
          },
        ),
      ),
    );
    const cpu = process.cpuUsage(started);
    for (const answer of answers) expect(answer.ok === false && answer.error.code).toBe('RUN_NOT_FOUND');
    expect(await claims()).toEqual(before);
    console.info(
      `commands for runs that do not exist: ${COUNT} refused, command claims in Redis ${before.length} → ${(await claims()).length}, ` +
        `CPU of this process (client and every in-process service) ${Math.round((cpu.user + cpu.system) / COUNT)} µs per command`,
    );
  });

  it('are refused the same way when sent again under the same command_id: each copy, nothing kept', async () => {
    const commandId = randomUUID();
    const runId = `run_${randomUUID()}`;
    for (let copy = 0; copy < 3; copy += 1) {
      const answer = await g.client.call(
        'get_customer.v1',
        { customer_id: 'C-1842' },
        { runId, runKey: invented, tenant: 'acme', commandId },
      );
      expect(answer.ok === false && answer.error.code).toBe('RUN_NOT_FOUND');
    }
    expect((await claims()).filter((key) => key.includes(runId))).toEqual([]);
  });
});
