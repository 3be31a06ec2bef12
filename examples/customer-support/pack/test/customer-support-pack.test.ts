// The reference domain as a tool pack: its shape, its configuration, its tools bound once by setup,
// and the typed preview/commit pairs whose drafts the commits' proposal schemas admit.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { describePack, PackError, readPackConfig, validatePack } from '@gatehouse/sdk';
import type { ProposalArgs, RunArgs, ToolArgs, ToolImplementation } from '@gatehouse/sdk';
import { TEST_CREDENTIAL, testContext } from '@gatehouse/sdk/testing';
import {
  commitAddressChangeV1,
  commitAddressChangeV2,
  customerSupportPack,
  customerSupportCatalog,
  customerSupportImplementations,
  sendCustomerEmail,
} from '@gatehouse/example-customer-support';
import type { AddressChangeArguments } from '@gatehouse/example-customer-support';

const readJson = (url: URL): unknown => JSON.parse(readFileSync(url, 'utf8'));

/** What the executor would hand the handlers; the stand-in refuses any request without its credential. */
const CREDENTIAL = TEST_CREDENTIAL;
const context = testContext({ principal: 'agent-1' });

/** A stand-in for the customers service: answers GET /customers/:id and records who asked. */
function fakeCustomers(): { server: Server; seen: string[]; url: () => string } {
  const seen: string[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    seen.push(`${String(request.headers['x-tenant'])} ${request.method ?? ''} ${request.url ?? ''}`);
    response.setHeader('content-type', 'application/json');
    if (request.headers.authorization !== `Bearer ${CREDENTIAL}`) {
      response.statusCode = 401;
      response.end(JSON.stringify({ error: { code: 'ASSERTION_MISSING', message: 'no call assertion' } }));
      return;
    }
    response.end(
      JSON.stringify({
        id: 'C-7',
        name: 'Ada',
        email: 'ada@example.com',
        internal_notes: 'never leaves',
        credit_score: 700,
        shipping_address: { line1: '1 Main St', city: 'Oslo', country: 'NO', postal_code: null, geo: 'x' },
        saved_addresses: [],
        version: 3,
        updated_at: '2026-01-01T00:00:00Z',
      }),
    );
  });
  return { server, seen, url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const find = (tools: readonly ToolImplementation[], address: string): ToolImplementation => {
  const found = tools.find((t) => t.contract.address === address);
  if (found === undefined) throw new Error(`${address} is not in the pack`);
  return found;
};

describe('the customer-support pack', () => {
  it('describes itself: its name, CUSTOMERS_URL and the governance files in config/', () => {
    const description = describePack(customerSupportPack);
    expect(description.name).toBe('customer-support');
    expect(description.variables).toEqual([
      {
        name: 'CUSTOMERS_URL',
        doc: expect.stringMatching(/customers service/) as unknown,
        default: 'http://127.0.0.1:8090',
        required: false,
        secret: false,
      },
      {
        name: 'CUSTOMERS_AUDIENCE',
        doc: expect.stringMatching(/call assertions/) as unknown,
        default: 'customers',
        required: false,
        secret: false,
      },
    ]);
    expect(description.roles).toMatch(/\/config\/roles\.json$/);
    expect(description.policyTable).toMatch(/\/config\/policy-table\.json$/);
    expect(description.approvers).toMatch(/\/config\/approvers\.json$/);
  });

  it('validates against config/roles.json and config/policy-table.json, with the reference catalog', async () => {
    const deps = await customerSupportPack.setup(readPackConfig(customerSupportPack, {}));
    const valid = validatePack(customerSupportPack, {
      tools: customerSupportPack.tools(deps),
      roles: readJson(customerSupportPack.roles),
      policyTable: readJson(customerSupportPack.policyTable),
    });
    expect(valid.catalog.tools().map((t) => t.address)).toEqual(
      customerSupportCatalog()
        .tools()
        .map((t) => t.address),
    );
    expect(Object.keys(valid.roles)).toEqual(['support-readonly', 'support-agent', 'ops-admin']);
    expect(valid.policyTable.rules).toHaveLength(7);
  });

  it('reads CUSTOMERS_URL with its default, without trailing slashes, and refuses what is not an http URL', () => {
    const audience = { CUSTOMERS_AUDIENCE: 'customers' };
    expect(readPackConfig(customerSupportPack, {})).toEqual({ CUSTOMERS_URL: 'http://127.0.0.1:8090', ...audience });
    expect(readPackConfig(customerSupportPack, { CUSTOMERS_URL: '' })).toEqual({ CUSTOMERS_URL: 'http://127.0.0.1:8090', ...audience });
    expect(readPackConfig(customerSupportPack, { CUSTOMERS_URL: 'https://crm.internal:8443//' })).toEqual({
      CUSTOMERS_URL: 'https://crm.internal:8443',
      ...audience,
    });
    for (const [raw, reason] of [
      ['ftp://crm', 'must be an http:// or https:// URL'],
      ['crm:8090', 'must be an http:// or https:// URL'],
      ['/customers', 'must be an absolute URL'],
    ]) {
      expect(() => readPackConfig(customerSupportPack, { CUSTOMERS_URL: raw })).toThrow(PackError);
      expect(() => readPackConfig(customerSupportPack, { CUSTOMERS_URL: raw })).toThrow(`CUSTOMERS_URL: ${reason}, got "${raw}"`);
    }
  });
});

describe('the tools of the pack and the compatibility exports', () => {
  const customers = fakeCustomers();
  beforeAll(() => new Promise<void>((resolve) => customers.server.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => customers.server.close(() => resolve())));

  it('call the customers service that setup was configured with, whatever the environment says later', async () => {
    const saved = process.env['CUSTOMERS_URL'];
    const tools = customerSupportPack.tools(
      await customerSupportPack.setup(readPackConfig(customerSupportPack, { CUSTOMERS_URL: customers.url() })),
    );
    process.env['CUSTOMERS_URL'] = 'http://127.0.0.1:1';
    try {
      const view = await find(tools, 'get_customer.v1').run({ customer_id: 'C-7' }, context);
      expect(view).toEqual({
        customer_id: 'C-7',
        name: 'Ada',
        email: 'ada@example.com',
        shipping_address: { line1: '1 Main St', city: 'Oslo', country: 'NO', postal_code: null },
        saved_addresses: [],
        version: 3,
        updated_at: '2026-01-01T00:00:00Z',
      });
      expect(customers.seen.at(-1)).toBe('acme GET /customers/C-7');
    } finally {
      if (saved === undefined) delete process.env['CUSTOMERS_URL'];
      else process.env['CUSTOMERS_URL'] = saved;
    }
  });

  it('keep customerSupportImplementations reading CUSTOMERS_URL from the environment on every call', async () => {
    const saved = process.env['CUSTOMERS_URL'];
    process.env['CUSTOMERS_URL'] = customers.url();
    try {
      await find(customerSupportImplementations, 'get_customer.v1').run({ customer_id: 'C-8' }, context);
      expect(customers.seen.at(-1)).toBe('acme GET /customers/C-8');
    } finally {
      if (saved === undefined) delete process.env['CUSTOMERS_URL'];
      else process.env['CUSTOMERS_URL'] = saved;
    }
  });
});

describe('the preview/commit pairs of the pack', () => {
  const catalog = customerSupportCatalog();

  it('draft proposals that the proposal schemas of their commits admit', () => {
    const preview = find(customerSupportImplementations, 'preview_address_change.v1');
    const address = { line1: '2 Side St', city: 'Oslo', country: 'NO', postal_code: null };
    const result = {
      customer_id: 'C-7',
      current_version: 3,
      before: address,
      after: { ...address, line1: '3 Side St' },
      changed_fields: ['line1'],
    };
    const draft = preview.propose?.({ customer_id: 'C-7', destination: { kind: 'saved', address_id: 'a1' } }, result, context);
    expect(draft?.arguments).toEqual({ customer_id: 'C-7', expected_version: 3, destination: { kind: 'saved', address_id: 'a1' } });
    expect(catalog.validateProposal(commitAddressChangeV2, draft?.arguments).ok).toBe(true);

    const email = find(customerSupportImplementations, 'preview_customer_email.v1');
    const args = { customer_id: 'C-7', subject: 'Hello', body: 'Your order shipped.' };
    const mail = email.propose?.(args, { ...args, recipient: 'ada@example.com' }, context);
    expect(mail?.diff.recipients).toEqual(['ada@example.com']);
    expect(catalog.validateProposal(sendCustomerEmail, mail?.arguments).ok).toBe(true);
  });

  it('type each commit by its proposal schema, the same type the retired v1 takes as input', () => {
    expectTypeOf<ProposalArgs<typeof commitAddressChangeV2>>().toEqualTypeOf<AddressChangeArguments>();
    expectTypeOf<RunArgs<typeof commitAddressChangeV2>>().toEqualTypeOf<AddressChangeArguments>();
    expectTypeOf<ToolArgs<typeof commitAddressChangeV1>>().toEqualTypeOf<AddressChangeArguments>();
    expectTypeOf<RunArgs<typeof sendCustomerEmail>>().toEqualTypeOf<{ customer_id: string; subject: string; body: string }>();
    expect(commitAddressChangeV2.proposal).toEqual(commitAddressChangeV1.input);
  });
});
