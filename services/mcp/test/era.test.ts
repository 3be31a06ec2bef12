import { describe, expect, it } from 'vitest';
import { mayCarryEnvelope } from '@gatehouse/mcp';

const claim = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };

describe('telling a 2026-07-28 request from a 2025-11-25 one before the SDK reads it', () => {
  it('takes a request for 2025-11-25 only when neither its body nor its header claims a later revision', () => {
    expect(mayCarryEnvelope({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25' } }, undefined)).toBe(
      false,
    );
    expect(mayCarryEnvelope({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { progressToken: 1 } } }, '2025-11-25')).toBe(
      false,
    );
    expect(mayCarryEnvelope({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: claim } }, undefined)).toBe(true);
    expect(mayCarryEnvelope([{ method: 'ping' }, { method: 'tools/list', params: { _meta: claim } }], undefined)).toBe(true);
    // A modern header without the envelope is the SDK's to refuse (-32602), not a legacy request.
    expect(mayCarryEnvelope({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, '2026-07-28')).toBe(true);
    expect(mayCarryEnvelope('not json-rpc', undefined)).toBe(false);
  });
});
