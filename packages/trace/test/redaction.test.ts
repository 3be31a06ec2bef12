import { describe, expect, it } from 'vitest';
import { Catalog, defineTool } from '@gatehouse/contracts';
import type { ToolContract } from '@gatehouse/contracts';
import { customerSupportCatalog } from '@gatehouse/example-customer-support';
import { boundaryValidCases, minimalValidCase } from '@gatehouse/testkit';
import type { JsonSchema } from '@gatehouse/testkit';
import { redactArguments } from '@gatehouse/trace';

const catalog = customerSupportCatalog();
const tool = (address: string): ToolContract => {
  const found = catalog.get(address);
  if (found === undefined) throw new Error(`${address} is not in the reference catalog`);
  return found;
};

/** Every string anywhere in a value. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(strings);
  return [];
}

describe('redaction keeps what replay needs and nothing else', () => {
  for (const t of catalog.tools()) {
    it(`keeps every valid input of ${t.address} valid against the same schema`, () => {
      const schema = t.input as JsonSchema;
      const cases = [{ name: 'minimal', value: minimalValidCase(schema) }, ...boundaryValidCases(schema)];
      expect(cases.length).toBeGreaterThan(0);
      for (const c of cases) {
        expect(catalog.validateInput(t, c.value).ok, `${c.name} is valid before redaction`).toBe(true);
        const redacted = redactArguments(t.input, c.value);
        const validated = catalog.validateInput(t, redacted);
        expect(validated.ok ? 'valid' : `${validated.error.field ?? ''} ${validated.error.message}`, c.name).toBe('valid');
      }
    });
  }

  it('replaces free strings by same-length placeholders and keeps ids, discriminators, enums and numbers', () => {
    const preview = redactArguments(tool('preview_customer_email.v1').input, {
      customer_id: 'C-1842',
      subject: 'Quarterly refund',
      body: 'Grüße, 👋 Marta',
    });
    expect(preview).toEqual({ customer_id: 'C-1842', subject: 'x'.repeat(16), body: 'x'.repeat(14) });

    const commit = redactArguments(tool('commit_address_change.v1').input, {
      customer_id: 'C-9',
      expected_version: 17,
      destination: { kind: 'new', line1: '2 New Street', city: 'York', country: 'GB', postal_code: 'YO1 7HH' },
    });
    expect(commit).toEqual({
      customer_id: 'C-9',
      expected_version: 17,
      destination: { kind: 'new', line1: 'xxxxxxxxxxxx', city: 'xxxx', country: 'GB', postal_code: 'xxxxxxx' },
    });
    expect(redactArguments(tool('start_customer_export.v1').input, { customer_id: 'C-1', format: 'csv' })).toEqual({
      customer_id: 'C-1',
      format: 'csv',
    });
  });

  it('keeps an unknown field by name and replaces its value, deeply', () => {
    const redacted = redactArguments(tool('get_customer.v1').input, {
      customer_id: 'C-1842',
      nickname: 'Bob the secret',
      extra: { pin: 1234, note: ['call me'], vip: true },
    });
    expect(redacted).toEqual({ customer_id: 'C-1842', nickname: 'x'.repeat(14), extra: { pin: 0, note: ['xxxxxxx'], vip: false } });
  });

  it('keeps an invalid call invalid on the same field, without its content', () => {
    const cases: { address: string; args: Record<string, unknown>; field: string; secret: string }[] = [
      { address: 'get_customer.v1', args: { customer_id: 'customer Marta' }, field: '/customer_id', secret: 'Marta' },
      { address: 'start_customer_export.v1', args: { customer_id: 'C-1', format: 'my secret' }, field: '/format', secret: 'secret' },
      {
        address: 'preview_customer_email.v1',
        args: { customer_id: 'C-1', subject: 's'.repeat(201), body: 'b' },
        field: '/subject',
        secret: 'sss',
      },
      {
        address: 'commit_address_change.v1',
        args: { customer_id: 'C-1', expected_version: 1, destination: { kind: 'home of Marta', line1: 'a' } },
        field: '/destination/kind',
        secret: 'Marta',
      },
    ];
    for (const c of cases) {
      const t = tool(c.address);
      const before = catalog.validateInput(t, c.args);
      const redacted = redactArguments(t.input, c.args);
      const after = catalog.validateInput(t, redacted);
      expect(before.ok || after.ok, c.address).toBe(false);
      if (before.ok || after.ok) continue;
      expect(before.error.field, c.address).toBe(c.field);
      expect(after.error.field, c.address).toBe(c.field);
      expect(strings(redacted).join(' '), c.address).not.toContain(c.secret);
    }
  });

  it('keeps date and uuid formats, and masks other formats so they stay valid', () => {
    const contact = defineTool({
      name: 'contact_test',
      version: 1,
      description: 'Test tool with formats.',
      input: {
        type: 'object',
        additionalProperties: false,
        required: ['email', 'when', 'id', 'site'],
        properties: {
          email: { type: 'string', format: 'email' },
          when: { type: 'string', format: 'date-time' },
          id: { type: 'string', format: 'uuid' },
          site: { type: 'string', format: 'uri' },
        },
      },
      output: { type: 'object', additionalProperties: false, properties: {} },
      effect: 'read',
      retry: 'safe',
      timeoutMs: 1_000,
      cancel: 'none',
      maxResultBytes: 1_024,
    });
    const formats = Catalog.load([contact]);
    const args = {
      email: 'marta.k@example.com',
      when: '2026-08-14T16:22:11Z',
      id: '0b6a3d52-8f6c-4b7e-9d3a-1c2b3d4e5f60',
      site: 'https://marta.example/profile?id=42',
    };
    const redacted = redactArguments(contact.input, args) as typeof args;
    expect(redacted.when).toBe(args.when);
    expect(redacted.id).toBe(args.id);
    expect(redacted.email).not.toContain('marta');
    expect(redacted.site).not.toContain('marta');
    expect(formats.validateInput(contact, redacted).ok).toBe(true);
  });
});
