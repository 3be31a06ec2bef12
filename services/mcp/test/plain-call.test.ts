import { describe, expect, it } from 'vitest';
import { plainEnvelopeToolCall, plainToolCall } from '@gatehouse/mcp';

const HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25' };
const CALL = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_customer_v1', arguments: { customer_id: 'C-1842' } } };
const withParams = (params: Record<string, unknown>): Record<string, unknown> => ({ ...CALL, params: { ...CALL.params, ...params } });

describe('which 2025-11-25 requests the front door answers without building an SDK server', () => {
  it('takes a lone tools/call with a name, arguments and a _meta that asks for no stream', () => {
    expect(plainToolCall(CALL, HEADERS)).toEqual({
      id: 3,
      name: 'get_customer_v1',
      arguments: { customer_id: 'C-1842' },
      meta: undefined,
      protocolVersion: '2025-11-25',
      era: 'handshake',
    });
    expect(
      plainToolCall({ ...CALL, id: 'a-1', params: { name: 'x_v1' } }, { ...HEADERS, 'mcp-protocol-version': undefined }),
    ).toMatchObject({ id: 'a-1', arguments: undefined, protocolVersion: undefined });
    expect(
      plainToolCall(withParams({ _meta: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } }), HEADERS)?.meta,
    ).toEqual({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    expect(plainToolCall(CALL, { ...HEADERS, 'content-type': 'application/json; charset=utf-8' })).toBeDefined();
  });

  it('leaves every other message to the SDK: other methods, batches, notifications, tasks, progress and any extra field', () => {
    const others: unknown[] = [
      { ...CALL, method: 'tools/list' },
      [CALL],
      { jsonrpc: '2.0', method: 'tools/call', params: CALL.params },
      { ...CALL, id: null },
      { ...CALL, id: 1.5 },
      { ...CALL, jsonrpc: '1.0' },
      { ...CALL, extra: true },
      withParams({ task: { ttl: 1000 } }),
      withParams({ _meta: { progressToken: 1 } }),
      withParams({ _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } }),
      withParams({ _meta: 'no' }),
      withParams({ arguments: ['C-1842'] }),
      withParams({ arguments: null }),
      withParams({ name: 7 }),
      withParams({ probe: 1 }),
      { ...CALL, params: [] },
      'tools/call',
      null,
    ];
    for (const body of others) expect({ body, plain: plainToolCall(body, HEADERS) }).toEqual({ body, plain: undefined });
  });

  it('leaves a request to the SDK when its headers are ones the SDK refuses', () => {
    expect(plainToolCall(CALL, { ...HEADERS, accept: 'application/json' })).toBeUndefined();
    expect(plainToolCall(CALL, { ...HEADERS, accept: undefined })).toBeUndefined();
    expect(plainToolCall(CALL, { ...HEADERS, 'content-type': 'text/plain' })).toBeUndefined();
    expect(plainToolCall(CALL, { ...HEADERS, 'content-type': 'application/jsonx' })).toBeUndefined();
    expect(plainToolCall(CALL, { ...HEADERS, 'mcp-protocol-version': '1999-01-01' })).toBeUndefined();
  });
});

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'agent', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const MODERN_HEADERS = { ...HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'get_customer_v1' };
const MODERN_CALL = { ...CALL, params: { ...CALL.params, _meta: ENVELOPE } };
const modernWith = (meta: Record<string, unknown>): Record<string, unknown> => ({
  ...MODERN_CALL,
  params: { ...MODERN_CALL.params, _meta: { ...ENVELOPE, ...meta } },
});

describe('which 2026-07-28 requests the front door answers without building an SDK server', () => {
  it('takes a lone tools/call whose envelope, revision, Mcp-Method and Mcp-Name all agree', () => {
    expect(plainEnvelopeToolCall(MODERN_CALL, MODERN_HEADERS)).toMatchObject({
      id: 3,
      name: 'get_customer_v1',
      era: 'envelope',
      protocolVersion: '2026-07-28',
    });
    expect(
      plainEnvelopeToolCall(modernWith({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }), MODERN_HEADERS),
    ).toBeDefined();
    // A client with the Tasks extension too: a commit that waits for a person then gets a task handle.
    expect(
      plainEnvelopeToolCall(
        modernWith({ 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } }),
        MODERN_HEADERS,
      ),
    ).toBeDefined();
  });

  it('leaves it to the SDK when a header disagrees or is missing, the envelope is off, or progress is asked for', () => {
    const refused: [unknown, Record<string, string | undefined>][] = [
      [MODERN_CALL, { ...MODERN_HEADERS, 'mcp-method': 'tools/list' }],
      [MODERN_CALL, { ...MODERN_HEADERS, 'mcp-method': undefined }],
      [MODERN_CALL, { ...MODERN_HEADERS, 'mcp-name': 'commit_address_change_v2' }],
      [MODERN_CALL, { ...MODERN_HEADERS, 'mcp-name': undefined }],
      [MODERN_CALL, { ...MODERN_HEADERS, 'mcp-protocol-version': undefined }],
      [MODERN_CALL, { ...MODERN_HEADERS, 'mcp-protocol-version': '2025-11-25' }],
      [
        modernWith({ 'io.modelcontextprotocol/protocolVersion': '2027-01-01' }),
        { ...MODERN_HEADERS, 'mcp-protocol-version': '2027-01-01' },
      ],
      [modernWith({ 'io.modelcontextprotocol/clientCapabilities': 'all of them' }), MODERN_HEADERS],
      [modernWith({ progressToken: 'p' }), MODERN_HEADERS],
      [modernWith({ 'io.modelcontextprotocol/logLevel': 'debug' }), MODERN_HEADERS],
      [CALL, MODERN_HEADERS],
      [MODERN_CALL, { ...MODERN_HEADERS, accept: 'application/json' }],
    ];
    for (const [body, headers] of refused)
      expect({ body, headers, plain: plainEnvelopeToolCall(body, headers) }).toEqual({ body, headers, plain: undefined });
  });
});
