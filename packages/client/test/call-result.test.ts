import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolError } from '@gatehouse/contracts';
import type { ToolError } from '@gatehouse/contracts';
import { errorResult, EventSerde, topicNames } from '@gatehouse/events';
import type { ToolErrorEvent, ToolResult } from '@gatehouse/events';
import { toCallError, toCallResult } from '@gatehouse/client';
import type { CallResult, UnknownCodeDetails } from '@gatehouse/client';

const address = { command_id: 'cmd-1', run_id: 'run-1', tenant: 'acme', tool: 'commit_address_change.v1' };

/** Just enough of a schema registry for EventSerde.register: every subject is BACKWARD, every schema id 7. */
function startRegistry(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((request, response) => {
    const body = request.method === 'POST' ? { id: 7 } : { compatibility: 'BACKWARD', compatibilityLevel: 'BACKWARD' };
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/vnd.schemaregistry.v1+json' });
      response.end(JSON.stringify(body));
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const bound = server.address();
      if (bound === null || typeof bound === 'string') return reject(new Error('the registry has no port'));
      resolve({
        url: `http://127.0.0.1:${bound.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

function failed(result: CallResult | undefined): Extract<CallResult, { ok: false }> {
  if (result === undefined || result.ok) throw new Error('a failed call was expected');
  return result;
}

function resultWith(error: ToolErrorEvent | null): ToolResult {
  return {
    schema_version: 1,
    ...address,
    status: 'error',
    operation_id: null,
    result: null,
    error,
    pending: null,
    arguments_sha256: null,
    completed_at: 1,
    duration_ms: null,
  };
}

const wireError = (code: string, details: string | null, retryable = true): ToolErrorEvent => ({
  code,
  message: 'the executor cannot serve this version',
  retryable,
  field: null,
  permitted: [],
  next: 'get_customer.v2',
  retry_after_ms: null,
  details,
});

describe('an error from a handler to the caller', () => {
  let registry: { url: string; close: () => Promise<void> };
  let serde: EventSerde;

  beforeAll(async () => {
    registry = await startRegistry();
    serde = new EventSerde({ registryUrl: registry.url, topics: topicNames('unit-') });
    await serde.register('results');
  });

  afterAll(async () => {
    await registry.close();
  });

  it.each<[string, ToolError]>([
    [
      'every field',
      toolError('VERSION_CONFLICT', 'the customer changed', {
        field: '/expected_version',
        permitted: ['get_customer.v1'],
        next: 'preview_address_change.v1',
        retryAfterMs: 250,
        details: { current_version: 18 },
      }),
    ],
    ['no optional field', toolError('RUN_NOT_FOUND', 'no such run')],
    ['a retry hint', toolError('RATE_LIMITED', 'slow down', { retryAfterMs: 1200 })],
    ['a retryable flag that overrides the catalogue', toolError('TIMEOUT', 'no slot freed up before the deadline', { retryable: false })],
    ['details that are null', toolError('UPSTREAM_ERROR', 'the CRM failed', { details: null })],
    ['details that are text', toolError('UPSTREAM_ERROR', 'the CRM failed', { details: 'HTTP 502' })],
    ['details that are a list', toolError('INVALID_ARGUMENT', 'bad', { field: '/x', details: [{ field: '/x', keyword: 'type' }] })],
  ])('comes back as the same ToolError through the result event and its Avro encoding, with %s', async (_label, error) => {
    const decoded = await serde.decode('results', serde.encode('results', errorResult(address, error)));
    if (!decoded.ok) throw new Error(decoded.message);
    expect(failed(toCallResult(decoded.value)).error).toStrictEqual(error);
  });

  it('comes back from an unknown outcome with the status unknown and the same ToolError', async () => {
    const error = toolError('OUTCOME_UNKNOWN', 'the write may have happened', { details: { attempts: 2 } });
    const decoded = await serde.decode('results', serde.encode('results', errorResult(address, error)));
    if (!decoded.ok) throw new Error(decoded.message);
    expect(failed(toCallResult(decoded.value))).toMatchObject({ status: 'unknown', error });
  });

  it('treats an empty permitted list as none, as the wire does', () => {
    const error = toolError('CAPABILITY_DENIED', 'not for this run', { permitted: [] });
    expect(failed(toCallResult(errorResult(address, error))).error).toStrictEqual(toolError('CAPABILITY_DENIED', 'not for this run'));
  });
});

describe('an error code this client does not know', () => {
  it('is returned as UPSTREAM_ERROR with the code and details it was sent with in details', () => {
    const error = toCallError(wireError('CODE_FROM_A_NEWER_SERVER', '{"versions":[1,2]}'));
    const details: UnknownCodeDetails = { code: 'CODE_FROM_A_NEWER_SERVER', details: { versions: [1, 2] } };
    expect(error).toStrictEqual({
      code: 'UPSTREAM_ERROR',
      message: 'the executor cannot serve this version',
      retryable: true,
      next: 'get_customer.v2',
      details,
    });
  });

  it('keeps only its code in details when it was sent without details', () => {
    expect(toCallError(wireError('CODE_FROM_A_NEWER_SERVER', null)).details).toStrictEqual({ code: 'CODE_FROM_A_NEWER_SERVER' });
  });

  it('keeps the retryable flag the server sent rather than the default of UPSTREAM_ERROR', () => {
    expect(toCallError(wireError('CODE_FROM_A_NEWER_SERVER', null, false)).retryable).toBe(false);
  });

  it('is not mistaken for a known code that differs only in case', () => {
    expect(toCallError(wireError('timeout', null))).toMatchObject({ code: 'UPSTREAM_ERROR', details: { code: 'timeout' } });
  });
});

describe('a failed result the client reads', () => {
  it('answers a failed result that carries no error with a non-retryable UPSTREAM_ERROR', () => {
    expect(failed(toCallResult(resultWith(null))).error).toStrictEqual({
      code: 'UPSTREAM_ERROR',
      message: 'result carried no error',
      retryable: false,
    });
  });

  it('keeps details that are not JSON as the text that was sent', () => {
    expect(toCallError(wireError('UPSTREAM_ERROR', 'HTTP 502 <html>')).details).toBe('HTTP 502 <html>');
  });
});
