import { describe, expect, it } from 'vitest';
import { okResult } from '@gatehouse/events';
import type { ToolResult } from '@gatehouse/events';
import { addressOf } from '../src/order-context.js';
import { commandAnswer } from '../src/command-claim.js';
import type { CommandDelivery } from '../src/command-claim.js';
import { KEY, order, world } from './fakes.js';

const COMMAND = 'cmd:run_1:cmd-1';

function delivery(published: ToolResult[]): CommandDelivery {
  return {
    order: order(),
    record: { topic: 'gatehouse.execute', partition: 0, offset: '7', key: 'acme', timestamp: '0', headers: undefined },
    origin: 'gatehouse.execute:0:7',
    logContext: {},
    publish: (result) => {
      published.push(result);
      return Promise.resolve();
    },
    alreadyOut: (result) => Promise.resolve(published.some((p) => p.command_id === result.command_id) ? 'published' : 'absent'),
  };
}

describe('a command’s one answer', () => {
  it('stages the write’s key only once the command’s stage held, and publishes after both', async () => {
    const w = world();
    const published: ToolResult[] = [];
    await w.ledger.claim(COMMAND, 'sha', 'executor/1', 10_000);
    await w.ledger.claim(KEY, 'sha', 'executor/1', 10_000);
    const answer = commandAnswer(delivery(published), { key: COMMAND, owner: 'executor/1' }, w.ledger, 10_000);
    const steps: string[] = [];
    await answer(okResult(addressOf(order()), '{}', {}), {
      stage: () => {
        steps.push(`key staged after: ${w.ledger.calls.filter((c) => c.startsWith('stage')).join(', ')}`);
        return w.ledger.stage(KEY, 'executor/1', '{}', { argumentsSha256: 'sha', leaseMs: 10_000, commandId: 'cmd-1' });
      },
      settle: () => Promise.resolve(true),
    });
    expect(steps).toEqual([`key staged after: stage ${COMMAND}`]);
    expect(published).toHaveLength(1);
  });

  it('stages nothing on the write’s key and publishes nothing when the command was taken over', async () => {
    const w = world();
    const published: ToolResult[] = [];
    // A stalled delivery's lease ran out and another executor took the command over.
    w.ledger.seed(COMMAND, { state: 'in_flight', arguments_sha256: 'sha', owner: 'executor/2', lease_until: Date.now() + 60_000 });
    const answer = commandAnswer(delivery(published), { key: COMMAND, owner: 'executor/1' }, w.ledger, 10_000);
    let keyStaged = false;
    await expect(
      answer(okResult(addressOf(order()), '{}', {}), {
        stage: () => {
          keyStaged = true;
          return Promise.resolve('staged');
        },
        settle: () => Promise.resolve(true),
      }),
    ).rejects.toThrow(/taken over by another owner/);
    expect(keyStaged).toBe(false);
    expect(published).toEqual([]);
  });

  it('commits its answer under a claim Redis lost, making the claim again with the answer staged, and not under another owner’s', async () => {
    const asked: boolean[] = [];
    for (const [what, meanwhile] of [
      ['lost', (w: ReturnType<typeof world>) => w.ledger.records.delete(COMMAND)],
      [
        'taken',
        (w: ReturnType<typeof world>) =>
          w.ledger.seed(COMMAND, { state: 'in_flight', arguments_sha256: 'sha', owner: 'executor/2', lease_until: Date.now() + 60_000 }),
      ],
    ] as const) {
      const w = world();
      await w.ledger.claim(COMMAND, 'sha', 'executor/1', 10_000);
      const published: ToolResult[] = [];
      // What a transactional publisher asks once the answer is in the log, before its commit.
      const holding: CommandDelivery = {
        ...delivery(published),
        publish: async (result, holds) => {
          meanwhile(w);
          asked.push(await holds());
          published.push(result);
        },
      };
      await commandAnswer(holding, { key: COMMAND, owner: 'executor/1' }, w.ledger, 10_000)(okResult(addressOf(order()), '{}', {}));
      const entry = w.ledger.records.get(COMMAND);
      if (what === 'lost') expect(entry).toMatchObject({ owner: 'executor/1', state: 'succeeded' });
      else expect(entry).toMatchObject({ owner: 'executor/2', state: 'in_flight' });
    }
    expect(asked).toEqual([true, false]);
  });

  it('says whether this delivery still holds the command, renewing it', async () => {
    const w = world();
    await w.ledger.claim(COMMAND, 'sha', 'executor/1', 10_000);
    expect(await commandAnswer(delivery([]), { key: COMMAND, owner: 'executor/1' }, w.ledger, 10_000).holdsCommand()).toBe(true);
    expect(await commandAnswer(delivery([]), { key: COMMAND, owner: 'executor/9' }, w.ledger, 10_000).holdsCommand()).toBe(false);
  });
});
