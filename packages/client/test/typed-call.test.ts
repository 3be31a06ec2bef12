import { describe, expectTypeOf, it } from 'vitest';
import { defineTool } from '@gatehouse/contracts';
import type { ErrorCode, ToolError, ToolResultOf } from '@gatehouse/contracts';
import type { CallError, CallOptions, CallResult, GatehouseClient } from '@gatehouse/client';

const getCustomer = defineTool({
  name: 'get_customer',
  version: 1,
  description: 'Reads a customer.',
  input: {
    type: 'object',
    properties: { customer_id: { type: 'string' } },
    required: ['customer_id'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: { name: { type: 'string' } },
    required: ['name'],
    additionalProperties: false,
  },
  effect: 'read',
  retry: 'safe',
  timeoutMs: 1000,
  cancel: 'none',
  maxResultBytes: 1024,
} as const);

const options: CallOptions = { runId: 'run-1', tenant: 'acme' };

describe('the types of a call', () => {
  it('keeps the ErrorCode union in the error a call returns', () => {
    expectTypeOf<CallError['code']>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<CallError>().toEqualTypeOf<ToolError>();
  });

  it('types the arguments and the result of a call by the contract of its tool', () => {
    // Only compiled, never run: the checks are the compiler's.
    const calls = async (client: GatehouseClient): Promise<void> => {
      const result = await client.call(getCustomer, { customer_id: 'C-1842' }, options);
      expectTypeOf(result).toEqualTypeOf<CallResult<ToolResultOf<typeof getCustomer>>>();
      expectTypeOf<ToolResultOf<typeof getCustomer>>().toEqualTypeOf<{ name: string }>();
      // @ts-expect-error customer_id is a string in the contract of get_customer.v1
      await client.call(getCustomer, { customer_id: 42 }, options);
      // @ts-expect-error customer_id is required by the contract of get_customer.v1
      await client.call(getCustomer, {}, options);
      // @ts-expect-error customerId is not an argument of get_customer.v1
      await client.call(getCustomer, { customer_id: 'C-1842', customerId: 'C-1842' }, options);
    };
    expectTypeOf(calls).toBeFunction();
  });

  it('keeps the call by address untyped by any contract', () => {
    const calls = async (client: GatehouseClient): Promise<void> => {
      const result = await client.call<{ name: string }>('get_customer.v1', { anything: true }, options);
      expectTypeOf(result).toEqualTypeOf<CallResult<{ name: string }>>();
      expectTypeOf(await client.call('get_customer.v1', null, options)).toEqualTypeOf<CallResult>();
    };
    expectTypeOf(calls).toBeFunction();
  });
});
