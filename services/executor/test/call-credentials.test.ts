import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { defineTool, implement, isToolFailure } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import type { ExecutionOrder } from '@gatehouse/events';
import { generateSigningKey, parseSigningKey } from '@gatehouse/events';
import { CallAssertionSigner } from '@gatehouse/identity';
import { CallCredentials } from '../src/call-credentials.js';

const commit = defineTool({
  name: 'commit_thing',
  version: 1,
  description: 'Commits a thing.',
  effect: 'write',
  retry: 'idempotent',
  approval: 'thing',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string' } } },
  output: { type: 'object', additionalProperties: false, required: ['ok'], properties: { ok: { type: 'boolean' } } },
  timeoutMs: 120_000,
  cancel: 'none',
  maxResultBytes: 256,
});
const withAudience: ToolImplementation = implement(commit, {
  credential: { audience: 'things' },
  run: () => Promise.resolve({ ok: true }),
});
const withoutAudience: ToolImplementation = implement(commit, { run: () => Promise.resolve({ ok: true }) });

const order = (overrides: Partial<ExecutionOrder> = {}): ExecutionOrder => ({
  schema_version: 1,
  order_id: 'ord-1',
  command_id: 'cmd-1',
  run_id: 'run-1',
  tenant: 'acme',
  principal: 'agent:bot',
  environment: 'test',
  tool: commit.address,
  effect: 'write',
  arguments: '{"proposal_id":"p_1"}',
  arguments_sha256: 'a'.repeat(64),
  proposal_id: 'p_1',
  approval: {
    approval_id: 'apr_1',
    approved_by: 'lead@acme.example',
    approved_at: 1,
    expires_at: Date.now() + 60_000,
    arguments_sha256: 'b'.repeat(64),
    target_version: 3,
  },
  idempotency_key: 'run-1:p_1:commit',
  deadline_at: null,
  issued_at: Date.now(),
  on_behalf_of: { issuer: 'https://idp.example', subject: 'person-1', name: 'Otto' },
  ...overrides,
});

/** The request a handler asks its credential for. */
const READ = { method: 'GET', url: 'http://things.internal:8080/things/T-1' } as const;
const WRITE = { method: 'POST', url: 'http://things.internal:8080/things/T-1/commits' } as const;

const claimsOf = (jwt: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;

describe('the credentials an executor gives its handlers', () => {
  let credentials: CallCredentials;
  beforeAll(async () => {
    credentials = new CallCredentials(
      await CallAssertionSigner.create('urn:gatehouse:unit', parseSigningKey(generateSigningKey('unit-assertion').signingKey)),
      'executor-7',
      { now: () => Date.now() },
    );
  });

  it('mints a write’s assertion for the arguments the handler holds, naming its key, proposal, approval and person', async () => {
    const claims = claimsOf(await credentials.forWrite(order(), withAudience, { id: 'T-1' })(WRITE));
    expect(claims).toMatchObject({
      iss: 'urn:gatehouse:unit',
      aud: 'things',
      sub: 'agent:bot',
      act: { sub: 'executor-7' },
      call: 'write',
      method: 'POST',
      target: '/things/T-1/commits',
      tenant: 'acme',
      run_id: 'run-1',
      command_id: 'cmd-1',
      tool: 'commit_thing.v1',
      on_behalf_of: { iss: 'https://idp.example', sub: 'person-1' },
      idempotency_key: 'run-1:p_1:commit',
      proposal_id: 'p_1',
      approval_id: 'apr_1',
      approver: 'lead@acme.example',
      arguments_sha256: createHash('sha256').update('{"id":"T-1"}').digest('hex'),
    });
  });

  it('binds a read’s assertion to the method, path and query the handler asks it for, as fetch sends them', async () => {
    const claims = claimsOf(
      await credentials.forRead(
        order({ effect: 'read' }),
        withAudience,
      )({
        method: 'get',
        url: new URL('http://things.internal:8080/things/T 1/parts?state=open#top'),
      }),
    );
    expect(claims).toMatchObject({
      call: 'read',
      method: 'GET',
      target: '/things/T%201/parts?state=open',
      arguments_sha256: 'a'.repeat(64),
    });
  });

  it('refuses CREDENTIAL_REFUSED, minting nothing, an assertion asked without its request or for a URL that is not absolute http', async () => {
    const ask = credentials.forRead(order({ effect: 'read' }), withAudience);
    for (const request of [
      undefined,
      { method: 'GET', url: '/things/T-1' },
      { method: 'GET', url: 'file:///etc/passwd' },
      { method: 'GET /x', url: READ.url },
    ]) {
      const refused = await ask(request).catch((error: unknown) => error);
      expect(isToolFailure(refused) && refused.error).toMatchObject({ code: 'CREDENTIAL_REFUSED', retryable: false });
    }
  });

  it('mints a fresh assertion on every ask, living at most a minute and 5 s even for a long tool, and never past the deadline', async () => {
    const ask = credentials.forRead(order({ effect: 'read' }), withAudience);
    const [a, b] = [claimsOf(await ask(READ)), claimsOf(await ask(READ))];
    expect(a['jti']).not.toBe(b['jti']);
    expect((a['exp'] as number) - (a['iat'] as number)).toBeLessThanOrEqual(65);
    const deadline = Date.now() + 10_000;
    expect(
      (claimsOf(await credentials.forRead(order({ deadline_at: deadline }), withAudience)(READ))['exp'] as number) * 1000,
    ).toBeLessThanOrEqual(deadline);
    expect(a).not.toHaveProperty('idempotency_key');
  });

  it('names the key but no arguments or approval in a status query’s assertion, and lets it outlive the call’s deadline', async () => {
    const claims = claimsOf(
      await credentials.forStatus(
        order({ deadline_at: Date.now() - 1_000 }),
        withAudience,
      )({
        method: 'GET',
        url: 'http://things.internal:8080/operations/run-1%3Ap_1%3Acommit',
      }),
    );
    expect(claims).toMatchObject({ call: 'status', idempotency_key: 'run-1:p_1:commit', target: '/operations/run-1%3Ap_1%3Acommit' });
    expect(claims).not.toHaveProperty('arguments_sha256');
    expect(claims).not.toHaveProperty('approval_id');
  });

  it('refuses a tool that declares no audience CREDENTIAL_REFUSED, and a call past its deadline TIMEOUT, minting nothing', async () => {
    const refused = await credentials
      .forRead(
        order(),
        withoutAudience,
      )(READ)
      .catch((error: unknown) => error);
    expect(isToolFailure(refused) && refused.error).toMatchObject({ code: 'CREDENTIAL_REFUSED', retryable: false });
    const late = await credentials
      .forWrite(order({ deadline_at: Date.now() + 200 }), withAudience, { id: 'T-1' })(WRITE)
      .catch((error: unknown) => error);
    expect(isToolFailure(late) && late.error).toMatchObject({ code: 'TIMEOUT', retryable: false });
  });

  it('mints by the reference clock: on a machine 30 s behind it, the assertion is issued and expires by the reference', async () => {
    const reference = () => Date.now() + 30_000;
    const behind = new CallCredentials(
      await CallAssertionSigner.create('urn:gatehouse:unit', parseSigningKey(generateSigningKey('unit-assertion').signingKey)),
      'executor-7',
      { now: reference },
    );
    const claims = claimsOf(await behind.forRead(order({ deadline_at: reference() + 10_000 }), withAudience)(READ));
    expect(Math.abs((claims['iat'] as number) * 1000 - reference())).toBeLessThan(2_000);
    expect((claims['exp'] as number) * 1000).toBeGreaterThan(reference() + 5_000);
  });
});
