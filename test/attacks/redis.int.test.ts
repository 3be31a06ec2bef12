// Surface: what people's sign-ins and token exchange leave in Redis (docs/threat-model.md, "M3",
// finding 7). The attacker: anyone who can read Redis (a leaked REDIS_URL, a backup, a replica, a
// shared host) and, for the last test, write it. The promise: no secret in the stores can be used
// as presented. A person's access token (kept by the MCP front door and the control API) and the
// refresh tokens token exchange leaves are stored only sealed to the executors' public keys, bound
// to their run: nothing read from Redis works at the MCP front door or at the IdP, and a sealed
// token moved to another run opens for no one, while the executors go on acting for the person.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenVerifier, TokenExchanger } from '@gatehouse/identity';
import type { ExchangeStep } from '@gatehouse/identity';
import { AgentPolicy, liveRoleTools } from '@gatehouse/mcp';
import type { RunningMcpService } from '@gatehouse/mcp';
import { DelegationStore, DelegationWriter } from '@gatehouse/state';
import type { Redis } from '@gatehouse/state';
import { startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse } from '../support/gatehouse.js';
import { EXECUTOR_CLIENT, ISSUER, PEOPLE, stackExchange, tokensOf } from '../support/identity.js';
import { connectHttp, dataOf, startFrontDoor } from '../support/mcp.js';
import type { McpResult, RunWithToken } from '../support/mcp.js';
import { ENVELOPE_REVISION } from '../support/mcp-envelope.js';
import { RECORDS, readRecordTool, registerRecordsRun, startRecordsService } from '../support/records-service.js';
import type { RecordsService } from '../support/records-service.js';
import { TEST_SEALER, TEST_UNSEALER } from '../support/signing.js';
import { TEST_ROLE, testCatalog } from '../support/test-catalog.js';

// The audience the realm's gatehouse.mcp scope gives people's tokens for the tests' front door.
const RESOURCE = 'http://127.0.0.1:18095/mcp';
const TOKEN_ENDPOINT = `${ISSUER}/protocol/openid-connect/token`;

let recordsUrl = '';
const readRecord = readRecordTool(() => recordsUrl);

/** Every key under `prefix`, on every master. */
async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const keys: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
  }
  return keys;
}

/** Everything an attacker who reads Redis sees under `prefix`: each key's name and every string it holds. */
async function readEverything(redis: Redis, prefix: string): Promise<Map<string, string[]>> {
  const seen = new Map<string, string[]>();
  for (const key of await keysUnder(redis, prefix)) {
    const type = await redis.type(key);
    const values =
      type === 'string'
        ? [(await redis.get(key)) ?? '']
        : type === 'hash'
          ? Object.entries(await redis.hgetall(key)).flat()
          : type === 'list'
            ? await redis.lrange(key, 0, -1)
            : type === 'set'
              ? await redis.smembers(key)
              : type === 'zset'
                ? await redis.zrange(key, 0, -1)
                : type === 'stream'
                  ? (await redis.xrange(key, '-', '+')).flatMap(([id, fields]) => [id, ...fields])
                  : [];
    // A key that vanished between SCAN and TYPE (an expiry) holds nothing to read.
    if (type !== 'none') seen.set(key, [key, ...values]);
  }
  return seen;
}

/** Every string a stored value holds: itself, each string inside it when it is JSON, and each JWT-shaped piece of it. */
function candidatesIn(value: string): string[] {
  const found = new Set<string>([value]);
  const walk = (node: unknown): void => {
    if (typeof node === 'string') found.add(node);
    else if (Array.isArray(node)) node.forEach(walk);
    else if (typeof node === 'object' && node !== null) for (const [k, v] of Object.entries(node)) [k, v].forEach(walk);
  };
  try {
    walk(JSON.parse(value));
  } catch {
    // Not JSON: the value itself is the candidate.
  }
  for (const candidate of [...found]) for (const match of candidate.matchAll(JWT_SHAPE)) found.add(match[0]);
  return [...found].filter((candidate) => candidate.length > 0);
}

// Three base64url segments with dots between: a JWS, as every token the IdP issues is.
const JWT_SHAPE = /[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g;

/** The claims of `candidate` when it is a JWT the IdP issued (its payload names the IdP as `iss`). */
function idpClaims(candidate: string): Record<string, unknown> | undefined {
  const [, payload = ''] = candidate.split('.');
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    return claims['iss'] === ISSUER ? claims : undefined;
  } catch {
    return undefined;
  }
}

/** A tools/list at the front door with `token` as the bearer; the HTTP status. */
async function bearerStatus(url: string, token: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': ENVELOPE_REVISION,
      'mcp-method': 'tools/list',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': ENVELOPE_REVISION,
          'io.modelcontextprotocol/clientInfo': { name: 'attacker', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  await response.body?.cancel();
  return response.status;
}

/** The IdP's answer to `candidate` presented as a refresh token by the executors' client (which holds the secret). */
async function refreshStatus(candidate: string): Promise<number> {
  const response = await fetch(TOKEN_ENDPOINT, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${EXECUTOR_CLIENT.id}:${EXECUTOR_CLIENT.secret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: candidate }),
  });
  await response.body?.cancel();
  return response.status;
}

describe('an attacker who reads every key of Redis after people signed in and tokens were exchanged', () => {
  let g: Gatehouse;
  let door: RunningMcpService;
  let records: RecordsService;
  let personToken = '';
  let mcpRunId = '';
  let controlRunId = '';

  const register = async (body: Record<string, unknown>): Promise<string> => {
    const response = await registerRecordsRun(g, body);
    expect(response.status).toBe(201);
    return ((await response.json()) as { run_id: string }).run_id;
  };

  beforeAll(async () => {
    records = await startRecordsService();
    recordsUrl = records.url;
    const { catalog, implementations, roles } = testCatalog([readRecord]);
    g = await startGatehouse('atk-redis', { catalog, implementations, roles, exchange: true });
    // The agent policy of this test: an agent owner's MCP client acts in a run of the test role.
    const policyFile = join(mkdtempSync(join(tmpdir(), 'gatehouse-agent-policy-')), 'agent-policy.json');
    writeFileSync(
      policyFile,
      JSON.stringify({
        rules: [
          {
            claim: 'groups',
            value: 'agent-owners',
            role: TEST_ROLE,
            tenant_claim: 'tenant',
            environment: 'sandbox',
            run_ttl_ms: 3_600_000,
          },
        ],
      }),
    );
    door = await startFrontDoor(g, {
      people: {
        verifier: await AccessTokenVerifier.discover({ issuer: ISSUER, audience: RESOURCE }),
        policy: AgentPolicy.load(policyFile, liveRoleTools(roles, catalog), 24 * 3600 * 1000),
        scope: 'gatehouse.mcp',
        delegation: { clientId: EXECUTOR_CLIENT.id, sealer: TEST_SEALER },
      },
    });

    // The person signs in through their MCP client and calls the tool: the front door keeps their
    // token for the run, the executor exchanges it and keeps the refresh token the exchange left.
    personToken = (await tokensOf(PEOPLE.owner, 'gatehouse-test', 'openid gatehouse.mcp')).access_token;
    const client = await connectHttp(door.url, { mcp_token: personToken } as RunWithToken);
    try {
      const read = (await client.callTool({ name: 'read_record_v1', arguments: {} })) as McpResult;
      expect(dataOf(read)).toEqual({ record_id: 'R-1', owner: PEOPLE.owner.subject });
    } finally {
      await client.close();
    }
    mcpRunId = (await keysUnder(g.redis, `${g.redisPrefix}subject:{run_mcp_`)).map((key) => /\{(run_mcp_[^}]+)\}/.exec(key)?.[1])[0] ?? '';
    expect(mcpRunId).toMatch(/^run_mcp_/);

    // Trusted code registers a run with the person's token too, and that run exchanges it.
    controlRunId = await register({
      subject_token: (await tokensOf(PEOPLE.owner, 'gatehouse-test', 'openid gatehouse.delegation')).access_token,
    });
    const viaControl = await g.client.call('read_record.v1', {}, { runId: controlRunId, tenant: 'acme' });
    expect(viaControl.ok && viaControl.result).toEqual({ record_id: 'R-1', owner: PEOPLE.owner.subject });
  });
  afterAll(async () => {
    await door?.stop();
    await g?.stop();
    await records?.close();
  });

  it('finds only sealed values: none is a JWT, none works as a bearer token at /mcp, none as a refresh token at the IdP', async () => {
    const stored = await readEverything(g.redis, g.redisPrefix);
    // What the attack is after is there: both runs' person tokens and the refresh tokens their exchanges left.
    for (const runId of [mcpRunId, controlRunId]) {
      expect(stored.has(g.keys.subjectToken(runId)), `${runId}'s token`).toBe(true);
      expect(
        [...stored.keys()].some((key) => key.startsWith(`${g.redisPrefix}xgrant:{${runId}}:`)),
        `${runId}'s refresh token`,
      ).toBe(true);
    }
    const candidates = [...new Set([...stored.values()].flat().flatMap(candidatesIn))];
    const jwts = candidates.filter((candidate) => candidate.match(JWT_SHAPE)?.[0] === candidate);

    // The probes would catch a stored token: the person's own works at the front door and names the IdP.
    expect(await bearerStatus(door.url, personToken)).toBe(200);
    expect(idpClaims(personToken)).toMatchObject({ sub: PEOPLE.owner.subject });

    // A bearer token is one run of visible ASCII (RFC 6750): every such string Redis holds is tried.
    const bearers = candidates.filter((candidate) => /^[\x21-\x7e]+$/.test(candidate));
    expect(bearers.length).toBeGreaterThan(10);
    const workAtMcp: string[] = [];
    for (const candidate of bearers) if ((await bearerStatus(door.url, candidate)) !== 401) workAtMcp.push(candidate);
    // Each stored person token, as Redis gives it, presented to the IdP as the executors' refresh token (with
    // their client's secret, which the attacker may hold too), and every JWT-shaped value, were there one.
    const personTokens = [...stored.entries()].filter(([key]) => /:(subject|xgrant):\{/.test(key)).map(([, values]) => values[1] ?? '');
    expect(personTokens.length).toBeGreaterThanOrEqual(4);
    const refreshAtIdp: string[] = [];
    for (const candidate of new Set([...personTokens, ...jwts])) if ((await refreshStatus(candidate)) !== 400) refreshAtIdp.push(candidate);

    expect({
      jwts,
      issuedByIdp: candidates.filter((candidate) => idpClaims(candidate) !== undefined),
      holdingThePersonsToken: candidates.filter((candidate) => candidate.includes(personToken.split('.')[1] ?? personToken)),
      workAtMcp,
      refreshAtIdp,
    }).toEqual({ jwts: [], issuedByIdp: [], holdingThePersonsToken: [], workAtMcp: [], refreshAtIdp: [] });
  });

  it('leaves the executors able to act for the person: what Redis holds opens for them and refreshes at the IdP', async () => {
    const delegation = new DelegationStore(g.redis, g.keys, TEST_UNSEALER);
    // The refresh token the MCP run's exchange left, opened as an executor opens it, is one the IdP takes.
    const refreshToken = await delegation.grant(mcpRunId, RECORDS);
    expect(refreshToken).toBeDefined();
    expect(await refreshStatus(refreshToken ?? '')).toBe(200);
    expect(await delegation.subjectToken(mcpRunId)).toBe(personToken);

    // A fresh executor (nothing cached) gets the person a token for the system of record from Redis alone.
    const steps: ExchangeStep[] = [];
    const exchanger = await TokenExchanger.discover({ ...stackExchange, delegation, onStep: (step) => steps.push(step) });
    for (const runId of [mcpRunId, controlRunId]) {
      const outcome = await exchanger.tokenFor(runId, RECORDS);
      expect(outcome.ok, runId).toBe(true);
    }
    expect(steps).toEqual(['refreshed', 'refreshed']);
  });

  it("opens for no run a sealed token the attacker copies under another run's keys: that run's call is CREDENTIAL_REFUSED", async () => {
    const victim = await register({ on_behalf_of: { issuer: ISSUER, subject: PEOPLE.owner.subject } });
    // With write access too, the attacker copies the MCP run's sealed token and refresh token to a run that has none.
    for (const key of [g.keys.subjectToken(mcpRunId), ...(await keysUnder(g.redis, `${g.redisPrefix}xgrant:{${mcpRunId}}:`))]) {
      const sealed = await g.redis.get(key);
      expect(sealed).not.toBeNull();
      await g.redis.set(key.replace(`{${mcpRunId}}`, `{${victim}}`), sealed ?? '', 'PX', 60_000);
    }
    const before = records.seen.length;
    const read = await g.client.call('read_record.v1', {}, { runId: victim, tenant: 'acme' });
    expect(!read.ok && read.error).toMatchObject({ code: 'CREDENTIAL_REFUSED', retryable: false });
    expect(records.seen.length).toBe(before);
  });
  it('seals a token of its own person to the executors’ public key under a run that acts for someone else: CREDENTIAL_REFUSED, nothing sent', async () => {
    const victim = await register({ on_behalf_of: { issuer: ISSUER, subject: PEOPLE.owner.subject } });
    // Sealing needs only the executors' public keys; the token is the attacker's own, for the executors.
    const own = await tokensOf(PEOPLE.lead, 'gatehouse-test', 'openid gatehouse.delegation');
    await new DelegationWriter(g.redis, g.keys, TEST_SEALER).saveSubjectToken(victim, own.access_token, Date.now() + 60_000);
    const before = records.seen.length;

    const read = await g.client.call('read_record.v1', {}, { runId: victim, tenant: 'acme' });

    expect(!read.ok && read.error).toMatchObject({ code: 'CREDENTIAL_REFUSED', retryable: false });
    expect(!read.ok && read.error.message).toContain("does not name the run's person");
    expect(records.seen.length).toBe(before);
  });
});
