import { describe, expect, it } from 'vitest';
import { Catalog, defineTool } from '@gatehouse/contracts';
import { grantRun, liveToolsOf } from '@gatehouse/governance';
import type { Roles } from '@gatehouse/governance';

const read = (name: string, version: number, retired = false) =>
  defineTool({
    name,
    version,
    retired,
    description: `Test read ${name} v${version}.`,
    effect: 'read',
    retry: 'safe',
    cancel: 'none',
    timeoutMs: 1_000,
    maxResultBytes: 1_024,
    input: { type: 'object', additionalProperties: false, properties: {} },
    output: { type: 'object', additionalProperties: false, properties: {} },
  } as const);

const catalog = Catalog.load([read('get_ticket', 1, true), read('get_ticket', 2), read('find_tickets', 1)]);
const roles: Roles = {
  agent: { description: 'Reads tickets.', readOnly: true, tools: ['get_ticket.v1', 'get_ticket.v2', 'find_tickets.v1'] },
  lister: { description: 'Lists only.', readOnly: true, tools: ['find_tickets.v1'] },
};

describe('registering a run: its role, its lifetime and its tools', () => {
  it('grants every live tool of the role when no narrowing is asked, sorted, never a retired version', () => {
    expect(liveToolsOf(roles, 'agent', catalog)).toEqual(['get_ticket.v2', 'find_tickets.v1']);
    expect(grantRun(roles, catalog, { role: 'agent', ttlMs: 60_000 }, 3_600_000)).toEqual({
      ok: true,
      capabilities: ['find_tickets.v1', 'get_ticket.v2'],
    });
  });

  it('narrows the run to the tools asked for', () => {
    expect(grantRun(roles, catalog, { role: 'agent', ttlMs: 60_000, capabilities: ['find_tickets.v1'] }, 3_600_000)).toEqual({
      ok: true,
      capabilities: ['find_tickets.v1'],
    });
  });

  it('never widens a run past its role, nor grants a retired version anew, and names what may be granted', () => {
    expect(grantRun(roles, catalog, { role: 'lister', ttlMs: 60_000, capabilities: ['get_ticket.v2'] }, 3_600_000)).toEqual({
      ok: false,
      code: 'CAPABILITY_OUTSIDE_ROLE',
      message: 'not grantable to role lister: get_ticket.v2',
      permitted: ['find_tickets.v1'],
    });
    expect(grantRun(roles, catalog, { role: 'agent', ttlMs: 60_000, capabilities: ['get_ticket.v1'] }, 3_600_000)).toMatchObject({
      ok: false,
      code: 'CAPABILITY_OUTSIDE_ROLE',
    });
  });

  it('refuses a role that does not exist, naming the roles there are, and a lifetime past the bound', () => {
    expect(grantRun(roles, catalog, { role: 'admin', ttlMs: 60_000 }, 3_600_000)).toEqual({
      ok: false,
      code: 'UNKNOWN_ROLE',
      message: 'no role admin',
      permitted: ['agent', 'lister'],
    });
    expect(grantRun(roles, catalog, { role: 'agent', ttlMs: 3_600_001 }, 3_600_000)).toEqual({
      ok: false,
      code: 'TTL_TOO_LONG',
      message: 'ttl_ms may be at most 3600000',
    });
    expect(grantRun(roles, catalog, { role: 'agent', ttlMs: 3_600_000 }, 3_600_000).ok).toBe(true);
  });
});
