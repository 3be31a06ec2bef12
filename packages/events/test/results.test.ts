import avsc from 'avsc';
import { describe, expect, it } from 'vitest';
import { Effect, toolError } from '@gatehouse/contracts';
import { errorResult, loadEventSchemas, toErrorEvent } from '@gatehouse/events';
import type { ResultAddress } from '@gatehouse/events';

const schemas = loadEventSchemas();
const resultType = avsc.Type.forSchema(schemas.results as avsc.Schema);
const address: ResultAddress = { command_id: 'cmd-1', run_id: 'run-1', tenant: 'acme', tool: 'commit_address_change.v1' };
const at = { completedAt: 1_700_000_000_000 };

const everyField = toolError('VERSION_CONFLICT', 'the customer changed', {
  field: '/expected_version',
  permitted: ['get_customer.v1'],
  next: 'preview_address_change.v1',
  retryAfterMs: 250,
  details: { current_version: 18 },
});
const bare = toolError('RUN_NOT_FOUND', 'no such run');

describe('a ToolError in a result event', () => {
  // The bytes were written by the events package before errorResult took the contracts' ToolError:
  // the wire must not change with the type.
  it('encodes to the same Avro bytes as before', () => {
    const full = errorResult(address, everyField, { ...at, argumentsSha256: 'ab'.repeat(32), durationMs: 12, operationId: 'op-1' });
    expect(resultType.toBuffer(full).toString('hex')).toBe(
      '020a636d642d310a72756e2d310861636d6530636f6d6d69745f616464726573735f6368616e67652e76310202086f702d3100022056455253494f4e5f434f4e464c4943542874686520637573746f6d6572206368616e6765640002222f65787065637465645f76657273696f6e021e6765745f637573746f6d65722e7631000232707265766965775f616464726573735f6368616e67652e763102f403022c7b2263757272656e745f76657273696f6e223a31387d000280016162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616280a0abfef9620218',
    );
    expect(resultType.toBuffer(errorResult(address, bare, at)).toString('hex')).toBe(
      '020a636d642d310a72756e2d310861636d6530636f6d6d69745f616464726573735f6368616e67652e7631020000021a52554e5f4e4f545f464f554e44166e6f20737563682072756e000000000000000080a0abfef96200',
    );
  });

  it('decodes from Avro to the event that was encoded', () => {
    for (const error of [everyField, bare]) {
      const event = errorResult(address, error, at);
      const decoded: unknown = resultType.fromBuffer(resultType.toBuffer(event));
      expect(decoded).toEqual(event);
    }
  });

  it('travels in snake_case with absent fields as null, an absent permitted list as empty and details as JSON text', () => {
    expect(toErrorEvent(everyField)).toEqual({
      code: 'VERSION_CONFLICT',
      message: 'the customer changed',
      retryable: false,
      field: '/expected_version',
      permitted: ['get_customer.v1'],
      next: 'preview_address_change.v1',
      retry_after_ms: 250,
      details: '{"current_version":18}',
    });
    expect(toErrorEvent(bare)).toEqual({
      code: 'RUN_NOT_FOUND',
      message: 'no such run',
      retryable: false,
      field: null,
      permitted: [],
      next: null,
      retry_after_ms: null,
      details: null,
    });
  });

  it('reports an OUTCOME_UNKNOWN error as an unknown outcome and any other code as an error', () => {
    expect(errorResult(address, toolError('OUTCOME_UNKNOWN', 'the write may have happened'), at).status).toBe('unknown');
    expect(errorResult(address, bare, at).status).toBe('error');
  });
});

describe('the effect of an execution order', () => {
  it('has the same symbols in the Avro enum as the contracts’ Effect', () => {
    const order = avsc.Type.forSchema(schemas.execute as avsc.Schema);
    if (!(order instanceof avsc.types.RecordType)) throw new Error('ExecutionOrder is a record');
    const effect = order.field('effect').type;
    expect(effect instanceof avsc.types.EnumType ? effect.symbols : undefined).toEqual(Object.keys(Effect));
  });
});
