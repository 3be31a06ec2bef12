// The refunds example as a tool pack: its shape, its governance files, its configuration, and its
// tools bound once by setup, against a stand-in for the refunds service.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describePack, isToolFailure, PackError, readPackConfig, validatePack } from '@gatehouse/sdk';
import type { ExecutionContext, ToolContract, ToolImplementation } from '@gatehouse/sdk';
import { TEST_CREDENTIAL, testContext } from '@gatehouse/sdk/testing';
import { commitRefund, moneyText, REFUND_IRREVERSIBLE, refundsPack } from '@gatehouse/example-refunds';

const readJson = (url: URL): unknown => JSON.parse(readFileSync(url, 'utf8'));

/** What the executor would hand the handlers; the stand-in refuses any request without its credential. */
const CREDENTIAL = TEST_CREDENTIAL;
const context = (overrides: Partial<ExecutionContext> = {}): ExecutionContext =>
  testContext({ principal: 'agent:refunds-bot', ...overrides });

const ORDER = {
  order_id: 'ORD-1001',
  tenant: 'acme',
  customer_ref: 'C-1842',
  payment_reference: 'psp_ch_1001_demo',
  total: { minor: 12_000, currency: 'EUR' },
  refunded: { minor: 2_000, currency: 'EUR' },
  refundable: { minor: 10_000, currency: 'EUR' },
  version: 4,
  placed_at: '2026-07-02T10:15:00.000Z',
  updated_at: '2026-08-01T09:30:00.000Z',
  refunds: [
    { refund_id: 'RF-0A1B2C3D4E5F', amount: { minor: 2_000, currency: 'EUR' }, reason: 'damaged', refunded_at: '2026-08-01T09:30:00.000Z' },
  ],
};

const COMMITTED = {
  refund_id: 'RF-00000000BEEF',
  order_id: 'ORD-1001',
  amount: { minor: 2_500, currency: 'EUR' },
  reason: 'goodwill',
  refunded_before: { minor: 2_000, currency: 'EUR' },
  refunded_after: { minor: 4_500, currency: 'EUR' },
  refundable_after: { minor: 7_500, currency: 'EUR' },
  previous_version: 4,
  new_version: 5,
  refunded_at: '2026-08-02T10:00:00.000Z',
};

type Answer = { readonly status: number; readonly body: unknown } | 'hang-up';

/** A stand-in for the refunds service: answers by `METHOD path`, records who asked and with which key. */
function fakeRefunds(): { server: Server; seen: string[]; answers: Map<string, Answer>; url: () => string } {
  const seen: string[] = [];
  const answers = new Map<string, Answer>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const route = `${request.method ?? ''} ${request.url ?? ''}`;
    seen.push(`${String(request.headers['x-tenant'])} ${route} ${String(request.headers['idempotency-key'] ?? '-')}`);
    const proved = request.headers.authorization === `Bearer ${CREDENTIAL}`;
    const answer = !proved
      ? { status: 401, body: { error: { code: 'ASSERTION_MISSING', message: 'no call assertion' } } }
      : (answers.get(route) ?? { status: 404, body: { error: { code: 'NOT_FOUND', message: 'no such order', field: 'order_id' } } });
    request.resume();
    if (answer === 'hang-up') {
      request.socket.destroy();
      return;
    }
    response.statusCode = answer.status;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(answer.body));
  });
  return { server, seen, answers, url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const find = (tools: readonly ToolImplementation[], address: string): ToolImplementation => {
  const found = tools.find((t) => t.contract.address === address);
  if (found === undefined) throw new Error(`${address} is not in the pack`);
  return found;
};

async function failureOf(promise: Promise<unknown>): Promise<{ error: unknown; ambiguous: boolean }> {
  try {
    await promise;
  } catch (failure) {
    if (isToolFailure(failure)) return { error: failure.error, ambiguous: failure.ambiguous };
    throw failure;
  }
  throw new Error('the call did not fail');
}

async function validated() {
  const deps = await refundsPack.setup(readPackConfig(refundsPack, {}));
  return validatePack(refundsPack, {
    tools: refundsPack.tools(deps),
    roles: readJson(refundsPack.roles),
    policyTable: readJson(refundsPack.policyTable),
  });
}

describe('the refunds pack', () => {
  it('describes itself: its name, REFUNDS_URL and the governance files in its own config/', () => {
    const description = describePack(refundsPack);
    expect(description.name).toBe('refunds');
    expect(description.variables).toEqual([
      {
        name: 'REFUNDS_URL',
        doc: expect.stringMatching(/refunds service/) as unknown,
        default: 'http://127.0.0.1:8094',
        required: false,
        secret: false,
      },
      {
        name: 'REFUNDS_AUDIENCE',
        doc: expect.stringMatching(/call assertions/) as unknown,
        default: 'refunds',
        required: false,
        secret: false,
      },
    ]);
    expect(description.roles).toMatch(/\/examples\/refunds\/pack\/config\/roles\.json$/);
    expect(description.policyTable).toMatch(/\/examples\/refunds\/pack\/config\/policy-table\.json$/);
    expect(description.approvers).toMatch(/\/examples\/refunds\/pack\/config\/approvers\.json$/);
  });

  it('passes validatePack with its tools, roles and policy table', async () => {
    const valid = await validated();
    expect(valid.catalog.tools().map((t) => [t.address, t.effect, t.approval ?? null])).toEqual([
      ['commit_refund.v1', 'write', 'refund'],
      ['get_order_refunds.v1', 'read', null],
      ['preview_refund.v1', 'read', null],
    ]);
    expect(valid.roles).toEqual({
      'refunds-readonly': expect.objectContaining({ readOnly: true, tools: ['get_order_refunds.v1'] }) as unknown,
      'refunds-agent': expect.objectContaining({
        readOnly: false,
        tools: ['get_order_refunds.v1', 'preview_refund.v1', 'commit_refund.v1'],
      }) as unknown,
    });
  });

  it('asks a refunds lead up to 500.00 and finance above it, or for any amount in an unlisted currency', async () => {
    const valid = await validated();
    const commit: ToolContract | undefined = valid.catalog.get('commit_refund.v1');
    if (commit === undefined) return expect.fail('commit_refund.v1 is not in the catalog');
    const decide = (minor: number, currency: string) =>
      valid.policyTable.evaluate({
        tool: commit,
        environment: 'production',
        affectedRecords: 1,
        amount: { minor, currency },
        recipients: [],
        irreversible: [REFUND_IRREVERSIBLE],
      });
    expect(decide(50_000, 'EUR')).toMatchObject({
      ruleId: 'refund-refunds-lead',
      decision: { kind: 'require_approval', approverRole: 'refunds-lead' },
    });
    expect(decide(50_001, 'EUR')).toMatchObject({
      ruleId: 'refund-over-500-finance',
      decision: { kind: 'require_approval', approverRole: 'finance' },
    });
    expect(decide(75_000, 'USD').decision).toMatchObject({ approverRole: 'finance' });
    expect(decide(100, 'JPY').decision).toMatchObject({ approverRole: 'finance' });
  });

  it('ships only demo approvers, whose published tokens hash to the stored hashes', () => {
    const file = readJson(new URL('../config/approvers.json', import.meta.url)) as {
      approvers: { identity: string; token_sha256: string; roles: string[]; demo?: boolean; note?: string }[];
    };
    expect(file.approvers.map((a) => [a.identity, a.roles])).toEqual([
      ['demo-refunds-lead@acme.example', ['refunds-lead']],
      ['demo-finance@acme.example', ['finance', 'refunds-lead']],
    ]);
    for (const approver of file.approvers) {
      expect(approver.demo).toBe(true);
      expect(approver.note).toMatch(/^DEMO approver/);
    }
    // The README publishes each token beside its identity; the file holds only their SHA-256.
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const published = [...readme.matchAll(/^\| `(demo-[^`]+@acme\.example)` \|.*\| `(demo-[a-z-]+-[0-9a-f]{32})` \|$/gm)].map(
      ([, identity, token]) => [
        identity,
        createHash('sha256')
          .update(token ?? '', 'utf8')
          .digest('hex'),
      ],
    );
    expect(published).toEqual(file.approvers.map((a) => [a.identity, a.token_sha256]));
  });

  it('reads REFUNDS_URL with its default, without trailing slashes, and refuses what is not an http URL', () => {
    expect(readPackConfig(refundsPack, {})).toEqual({ REFUNDS_URL: 'http://127.0.0.1:8094', REFUNDS_AUDIENCE: 'refunds' });
    expect(readPackConfig(refundsPack, { REFUNDS_URL: 'https://refunds.internal:8443//' })).toEqual({
      REFUNDS_URL: 'https://refunds.internal:8443',
      REFUNDS_AUDIENCE: 'refunds',
    });
    expect(() => readPackConfig(refundsPack, { REFUNDS_URL: 'ftp://refunds' })).toThrow(PackError);
    expect(() => readPackConfig(refundsPack, { REFUNDS_URL: '/refunds' })).toThrow('REFUNDS_URL: must be an absolute URL, got "/refunds"');
  });

  it('writes amounts for people in the currency’s own minor unit', () => {
    expect(moneyText({ minor: 2_500, currency: 'EUR' })).toBe('25.00 EUR');
    expect(moneyText({ minor: 149_900, currency: 'EUR' })).toBe('1,499.00 EUR');
    expect(moneyText({ minor: 5, currency: 'USD' })).toBe('0.05 USD');
    expect(moneyText({ minor: 1_500, currency: 'JPY' })).toBe('1,500 JPY');
    expect(moneyText({ minor: 1_234, currency: 'KWD' })).toBe('1.234 KWD');
  });
});

describe('the tools of the refunds pack', () => {
  const refunds = fakeRefunds();
  let tools: readonly ToolImplementation[] = [];
  beforeAll(async () => {
    await new Promise<void>((resolve) => refunds.server.listen(0, '127.0.0.1', resolve));
    const saved = process.env['REFUNDS_URL'];
    tools = refundsPack.tools(await refundsPack.setup(readPackConfig(refundsPack, { REFUNDS_URL: refunds.url() })));
    // Handlers never read the environment: pointing it elsewhere now changes nothing.
    process.env['REFUNDS_URL'] = 'http://127.0.0.1:1';
    return () => {
      if (saved === undefined) delete process.env['REFUNDS_URL'];
      else process.env['REFUNDS_URL'] = saved;
    };
  });
  afterAll(() => new Promise<void>((resolve) => refunds.server.close(() => resolve())));

  it('read an order as the tenant of the run, without the fields the service keeps for trusted callers', async () => {
    refunds.answers.set('GET /orders/ORD-1001', { status: 200, body: ORDER });
    const view = await find(tools, 'get_order_refunds.v1').run({ order_id: 'ORD-1001' }, context());
    expect(view).toEqual({
      order_id: 'ORD-1001',
      total: ORDER.total,
      refunded: ORDER.refunded,
      refundable: ORDER.refundable,
      version: 4,
      updated_at: ORDER.updated_at,
      refunds: ORDER.refunds,
    });
    expect(refunds.seen.at(-1)).toBe('acme GET /orders/ORD-1001 -');
  });

  it('preview a refund and draft the proposal its commit’s schema admits, with the amount and the refunded totals', async () => {
    refunds.answers.set('GET /orders/ORD-1001', { status: 200, body: ORDER });
    const preview = find(tools, 'preview_refund.v1');
    const args = { order_id: 'ORD-1001', amount: { minor: 2_500, currency: 'EUR' }, reason: 'goodwill' };
    const result = await preview.run(args, context());
    expect(result).toEqual({
      order_id: 'ORD-1001',
      current_version: 4,
      amount: args.amount,
      reason: 'goodwill',
      refunded_before: { minor: 2_000, currency: 'EUR' },
      refunded_after: { minor: 4_500, currency: 'EUR' },
      refundable_before: { minor: 10_000, currency: 'EUR' },
      refundable_after: { minor: 7_500, currency: 'EUR' },
    });
    const draft = preview.propose?.(args, result, context());
    expect(draft).toEqual({
      arguments: { order_id: 'ORD-1001', amount: { minor: 2_500, currency: 'EUR' }, reason: 'goodwill', expected_version: 4 },
      target: { type: 'order', id: 'ORD-1001', version: 4 },
      effect: 'Refund 25.00 EUR of order ORD-1001 to the customer (reason: goodwill); refunded so far 20.00 EUR → 45.00 EUR.',
      diff: {
        changes: [
          { field: 'refunded', before: { minor: 2_000, currency: 'EUR' }, after: { minor: 4_500, currency: 'EUR' } },
          { field: 'refundable', before: { minor: 10_000, currency: 'EUR' }, after: { minor: 7_500, currency: 'EUR' } },
        ],
        recipients: [],
        amount: { minor: 2_500, currency: 'EUR' },
        affectedRecords: 1,
        irreversible: ['money leaves the merchant'],
      },
    });
    const valid = await validated();
    expect(valid.catalog.validateProposal(commitRefund, draft?.arguments).ok).toBe(true);
  });

  it('refuse a preview for more than the refundable balance or in another currency, at the argument at fault', async () => {
    refunds.answers.set('GET /orders/ORD-1001', { status: 200, body: ORDER });
    const preview = find(tools, 'preview_refund.v1');
    const tooMuch = await failureOf(
      preview.run({ order_id: 'ORD-1001', amount: { minor: 10_001, currency: 'EUR' }, reason: 'damaged' }, context()),
    );
    expect(tooMuch.error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      field: '/amount/minor',
      retryable: false,
      details: { refundable: { minor: 10_000, currency: 'EUR' } },
    });
    const otherCurrency = await failureOf(
      preview.run({ order_id: 'ORD-1001', amount: { minor: 100, currency: 'USD' }, reason: 'damaged' }, context()),
    );
    expect(otherCurrency.error).toMatchObject({ code: 'INVALID_ARGUMENT', field: '/amount/currency' });
    const missing = await failureOf(
      preview.run({ order_id: 'ORD-9999', amount: { minor: 100, currency: 'EUR' }, reason: 'damaged' }, context()),
    );
    expect(missing.error).toMatchObject({ code: 'NOT_FOUND', field: '/order_id', retryable: false });
  });

  it('commit under the executor’s idempotency key and answer the committed view', async () => {
    refunds.answers.set('POST /orders/ORD-1001/refunds', { status: 201, body: { ...COMMITTED, tenant: 'acme' } });
    const commit = find(tools, 'commit_refund.v1');
    const args = { order_id: 'ORD-1001', amount: { minor: 2_500, currency: 'EUR' }, reason: 'goodwill', expected_version: 4 };
    expect(await commit.run(args, context({ idempotencyKey: 'run-1:p_1:commit' }))).toEqual(COMMITTED);
    expect(refunds.seen.at(-1)).toBe('acme POST /orders/ORD-1001/refunds run-1:p_1:commit');
    expect(commit.resourceOf?.(args)).toBe('order:ORD-1001');
  });

  it('answer a stale version with VERSION_CONFLICT whose next step is the preview', async () => {
    refunds.answers.set('POST /orders/ORD-1003/refunds', {
      status: 409,
      body: {
        error: {
          code: 'VERSION_CONFLICT',
          message: 'order ORD-1003 is at version 5, not 3',
          retryable: false,
          field: 'expected_version',
          current_version: 5,
        },
      },
    });
    const args = { order_id: 'ORD-1003', amount: { minor: 500, currency: 'USD' }, reason: 'damaged', expected_version: 3 };
    const conflict = await failureOf(find(tools, 'commit_refund.v1').run(args, context({ idempotencyKey: 'run-1:p_2:commit' })));
    expect(conflict).toEqual({
      ambiguous: false,
      error: {
        code: 'VERSION_CONFLICT',
        message: 'The order changed after the refund was proposed',
        retryable: false,
        field: '/expected_version',
        next: 'preview_refund.v1',
        details: { current_version: 5 },
      },
    });
  });

  it('fail a commit whose connection dropped as ambiguous, so the executor asks the status query', async () => {
    refunds.answers.set('POST /orders/ORD-1005/refunds', 'hang-up');
    const args = { order_id: 'ORD-1005', amount: { minor: 500, currency: 'EUR' }, reason: 'damaged', expected_version: 1 };
    const dropped = await failureOf(find(tools, 'commit_refund.v1').run(args, context({ idempotencyKey: 'run-1:p_3:commit' })));
    expect(dropped).toMatchObject({ ambiguous: true, error: { code: 'UPSTREAM_ERROR', retryable: true } });
  });

  it('ask the service by key for the outcome of a commit: succeeded, failed or unknown', async () => {
    const commit = find(tools, 'commit_refund.v1');
    if (commit.status === undefined) return expect.fail('commit_refund.v1 has no status query');
    const status = (key: string, at: ExecutionContext) => commit.status?.(key, at);
    refunds.answers.set('GET /operations/run-1%3Ap_1%3Acommit', {
      status: 200,
      body: { key: 'run-1:p_1:commit', status: 'succeeded', http_status: 201, response: COMMITTED },
    });
    expect(await status('run-1:p_1:commit', context())).toEqual({ state: 'succeeded', result: COMMITTED });
    expect(refunds.seen.at(-1)).toBe('acme GET /operations/run-1%3Ap_1%3Acommit -');
    refunds.answers.set('GET /operations/run-1%3Ap_2%3Acommit', {
      status: 200,
      body: {
        key: 'run-1:p_2:commit',
        status: 'failed',
        http_status: 409,
        error: { code: 'VERSION_CONFLICT', message: 'stale', field: 'expected_version', current_version: 5 },
      },
    });
    expect(await status('run-1:p_2:commit', context())).toMatchObject({
      state: 'failed',
      error: { code: 'VERSION_CONFLICT', retryable: false, next: 'preview_refund.v1' },
    });
    refunds.answers.set('GET /operations/run-1%3Ap_3%3Acommit', { status: 404, body: { key: 'run-1:p_3:commit', status: 'unknown' } });
    expect(await status('run-1:p_3:commit', context())).toEqual({ state: 'unknown' });
  });
});
