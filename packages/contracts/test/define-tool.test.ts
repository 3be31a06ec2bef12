import { describe, expect, expectTypeOf, it } from 'vitest';
import { Catalog, defineTool } from '@gatehouse/contracts';
import type { ToolArgs, ToolContract, ToolHandler, ToolResultOf } from '@gatehouse/contracts';
import { commitAddressChange, flowTools, getCustomer, previewAddressChange, readSpec } from './fixtures.js';

describe('defineTool', () => {
  it('addresses a tool as name.vN and defaults the slot class', () => {
    expect(getCustomer.address).toBe('get_customer.v1');
    expect(commitAddressChange.address).toBe('commit_address_change.v2');
    expect(getCustomer.concurrency).toBe('default');
    expect(defineTool(readSpec({ concurrency: 'crm' })).concurrency).toBe('crm');
  });

  it('returns a deeply frozen contract', () => {
    expect(Object.isFrozen(getCustomer)).toBe(true);
    expect(Object.isFrozen(getCustomer.input)).toBe(true);
    expect(Object.isFrozen(previewAddressChange.input.properties.destination.oneOf[1].properties.country)).toBe(true);
    expect(() => {
      (getCustomer as { retired?: boolean }).retired = true;
    }).toThrow(TypeError);
  });

  it('derives the argument type of a tool from its input schema', () => {
    expectTypeOf<ToolArgs<typeof getCustomer>>().toEqualTypeOf<{ customer_id: string; include_email?: boolean }>();
    expectTypeOf<ToolArgs<typeof previewAddressChange>>().toEqualTypeOf<{
      customer_id: string;
      destination: { kind: 'saved'; address_id: string } | { kind: 'new'; line1: string; city: string; country: string };
    }>();
    expectTypeOf<ToolArgs<typeof commitAddressChange>>().toEqualTypeOf<{ proposal_id: string }>();
    expectTypeOf<ToolArgs<ToolContract>>().toBeUnknown();
    expect(getCustomer.input.required).toEqual(['customer_id']);
  });

  it('derives the result type of a tool from its output schema', () => {
    expectTypeOf<ToolResultOf<typeof getCustomer>>().toEqualTypeOf<{
      customer_id: string;
      name: string;
      email?: string;
      version: number;
    }>();
    expectTypeOf<ToolResultOf<typeof commitAddressChange>['changed_fields']>().toEqualTypeOf<string[]>();
    expect(getCustomer.output.required).toContain('version');
  });

  it('types a handler from the contract without restating fields', async () => {
    const handler: ToolHandler<typeof getCustomer> = (args) => {
      // @ts-expect-error customerId is not an argument of get_customer.v1
      void args.customerId;
      return Promise.resolve({ customer_id: args.customer_id, name: 'Ada', version: 3 });
    };
    expectTypeOf(handler).parameter(0).toEqualTypeOf<ToolArgs<typeof getCustomer>>();
    // @ts-expect-error the result must carry `version`
    const broken: ToolHandler<typeof getCustomer> = (args) => Promise.resolve({ customer_id: args.customer_id, name: 'Ada' });
    void broken;
    expect(await handler({ customer_id: 'C-1' })).toEqual({ customer_id: 'C-1', name: 'Ada', version: 3 });
  });

  it('types the validated value by the contract it was validated against', () => {
    const catalog = Catalog.load(flowTools);
    const checked = catalog.validateInput(previewAddressChange, { customer_id: 'C-1', destination: { kind: 'saved', address_id: 'A' } });
    expect(checked.ok).toBe(true);
    if (checked.ok) {
      expectTypeOf(checked.value.destination.kind).toEqualTypeOf<'saved' | 'new'>();
      expect(checked.value.destination.kind).toBe('saved');
    }
  });
});
