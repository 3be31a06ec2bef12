import { describe, expect, it } from 'vitest';
import { Keyspace } from '@gatehouse/state';

/** What a Redis Cluster hashes of a key: between the first `{` and the next `}`, when that is not empty; else all of it. */
function hashedPart(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  return close === -1 || close === open + 1 ? key : key.slice(open + 1, close);
}

describe('Keyspace on a Redis Cluster', () => {
  const keys = new Keyspace('gh:');

  it('puts a write’s tenant and run slot sets, and every other scope’s, in one hash slot', () => {
    const parts = ['tenant:acme', 'run:run-9', 'tenant:globex', 'run:{odd}'].map((scope) => hashedPart(keys.clusterSlots(scope)));
    expect(new Set(parts)).toEqual(new Set(['slots']));
  });

  it('puts an MCP task and its run’s task index in one hash slot', () => {
    for (const runId of ['run-1', 'run-with:colons', 'a}b']) {
      expect(hashedPart(keys.mcpTask(runId, 'task_1'))).toBe(hashedPart(keys.mcpTasksOfRun(runId)));
    }
  });

  it('spreads records over the cluster by their own id', () => {
    expect(hashedPart(keys.run('run-1'))).toBe('run-1');
    expect(hashedPart(keys.idempotency('run-1:p_1:commit'))).toBe('run-1:p_1:commit');
    expect(hashedPart(keys.proposal('p_1'))).toBe('p_1');
    expect(hashedPart(keys.approval('a_1'))).toBe('a_1');
  });

  it('keeps the names under which runs, proposals, approvals and idempotency records are already stored', () => {
    expect([
      keys.run('r'),
      keys.proposal('p'),
      keys.approval('a'),
      keys.idempotency('k'),
      keys.runsOfTenant('acme'),
      keys.slots('tenant:acme'),
    ]).toEqual(['gh:run:{r}', 'gh:proposal:{p}', 'gh:approval:{a}', 'gh:idem:{k}', 'gh:runs:acme', 'gh:slots:tenant:acme']);
  });
});
