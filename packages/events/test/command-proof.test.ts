import { describe, expect, it } from 'vitest';
import {
  COMMAND_PROOF_HEADER,
  COMMAND_PROVER_HEADER,
  frontDoorProof,
  generateSigningKey,
  parseSigningKey,
  parseTrustedKeys,
  RunKey,
  RunKeyError,
  runPublicKey,
  verifyCommandProof,
  verifyRunRequest,
  wellFormedCommand,
} from '@gatehouse/events';
import type { ToolCommand } from '@gatehouse/events';
import { REPLY_PARTITION_HEADER } from '@gatehouse/telemetry';

const command: ToolCommand = {
  schema_version: 1,
  command_id: 'cmd-1',
  run_id: 'run-1',
  tenant: 'acme',
  tool: 'get_customer.v1',
  arguments: '{"customer_id":"C-1842"}',
  sent_at: 1_700_000_000_000,
  deadline_at: 1_700_000_030_000,
};
const runKey = RunKey.generate();
const publicKey = runPublicKey(runKey.publicKey());
const door = generateSigningKey('mcp-1');
const doorKey = parseSigningKey(door.signingKey);
const doors = parseTrustedKeys(door.trustedKey);
const none = new Map();

describe('a command proved with its run key', () => {
  it('verifies with the run record’s public key, from the key’s text as registration hands it over', () => {
    const again = RunKey.parse(runKey.text());
    const headers = { ...again.prove(command, 3), [REPLY_PARTITION_HEADER]: '3' };
    expect(verifyCommandProof(command, headers, publicKey, none)).toEqual({ ok: true, by: 'run', keyId: null });
  });

  it.each([
    ['another run', { run_id: 'run-2' }],
    ['another tenant', { tenant: 'globex' }],
    ['another tool', { tool: 'commit_address_change.v2' }],
    ['other arguments', { arguments: '{"customer_id":"C-2001"}' }],
    ['a later deadline', { deadline_at: 1_700_000_090_000 }],
    ['another command id', { command_id: 'cmd-2' }],
  ])('does not verify once moved to %s', (_what, change) => {
    const headers = runKey.prove(command, null);
    const check = verifyCommandProof({ ...command, ...change }, headers, publicKey, none);
    expect(check).toMatchObject({ ok: false, reason: 'bad_proof' });
  });

  it('is sent with lone surrogates made U+FFFD, so that what is proved is what reads back; well-formed text is left alone', () => {
    const hostile = { ...command, command_id: 'cmd-\uD800-1', tenant: 'acme\uDFFF', arguments: '{"a":"\uD83D\uDE00\uDC00"}' };
    const sent = wellFormedCommand(hostile);
    expect(sent).toMatchObject({ command_id: 'cmd-\uFFFD-1', tenant: 'acme\uFFFD', arguments: '{"a":"\uD83D\uDE00\uFFFD"}' });
    expect(wellFormedCommand(command)).toEqual(command);
    expect(() => runKey.prove(hostile, null)).toThrow(/lone surrogate/);
    expect(verifyCommandProof(sent, runKey.prove(sent, null), publicKey, none)).toMatchObject({ ok: true });
  });

  it('does not verify re-addressed to another reply partition', () => {
    const headers = { ...runKey.prove(command, 3), [REPLY_PARTITION_HEADER]: '4' };
    expect(verifyCommandProof(command, headers, publicKey, none)).toMatchObject({ ok: false, reason: 'bad_proof' });
  });

  it('does not verify under another run’s key', () => {
    const other = RunKey.generate();
    const check = verifyCommandProof(command, other.prove(command, null), publicKey, none);
    expect(check).toMatchObject({ ok: false, reason: 'bad_proof' });
  });

  it('is refused without a proof, with a malformed or a doubled one, and for a run that has no key', () => {
    expect(verifyCommandProof(command, {}, publicKey, none)).toMatchObject({ ok: false, reason: 'unproven' });
    expect(verifyCommandProof(command, undefined, publicKey, none)).toMatchObject({ ok: false, reason: 'unproven' });
    expect(verifyCommandProof(command, { [COMMAND_PROOF_HEADER]: 'not-base64!' }, publicKey, none)).toMatchObject({
      ok: false,
      reason: 'bad_proof',
    });
    const one = runKey.prove(command, null)[COMMAND_PROOF_HEADER] ?? '';
    const two = RunKey.generate().prove(command, null)[COMMAND_PROOF_HEADER] ?? '';
    expect(verifyCommandProof(command, { [COMMAND_PROOF_HEADER]: [Buffer.from(one), Buffer.from(two)] }, publicKey, none)).toMatchObject({
      ok: false,
      reason: 'bad_proof',
    });
    expect(verifyCommandProof(command, runKey.prove(command, null), undefined, none)).toMatchObject({
      ok: false,
      reason: 'run_has_no_key',
    });
  });
});

describe('a command proved by a front door', () => {
  it('verifies against the front doors’ keys, for a run that has no key of its own', () => {
    const headers = frontDoorProof(doorKey.keyId, doorKey.privateKey, command, null);
    expect(verifyCommandProof(command, headers, undefined, doors)).toEqual({ ok: true, by: 'front_door', keyId: 'mcp-1' });
  });

  it('is refused under a key id no front door has, and when a run key signs in a front door’s name', () => {
    const unknown = { ...frontDoorProof(doorKey.keyId, doorKey.privateKey, command, null), [COMMAND_PROVER_HEADER]: 'mcp-9' };
    expect(verifyCommandProof(command, unknown, publicKey, doors)).toMatchObject({ ok: false, reason: 'unknown_prover' });
    const posing = { ...runKey.prove(command, null), [COMMAND_PROVER_HEADER]: 'mcp-1' };
    expect(verifyCommandProof(command, posing, publicKey, doors)).toMatchObject({ ok: false, reason: 'bad_proof' });
  });
});

describe('run keys as text', () => {
  it('refuses text that is not a PKCS#8 Ed25519 key, naming no key material', () => {
    expect(() => RunKey.parse('%%%')).toThrow(RunKeyError);
    expect(() => RunKey.parse(Buffer.from('not a key').toString('base64'))).toThrow(/not a PKCS#8/);
    expect(runPublicKey('AAAA')).toBeUndefined();
    expect(runPublicKey(null)).toBeUndefined();
    expect(runPublicKey(undefined)).toBeUndefined();
  });
});

describe('a request that proves its run over HTTP', () => {
  const now = 1_700_000_000_000;
  const window = 5 * 60_000;

  it('verifies for its run within the window, either side of the clock', () => {
    expect(verifyRunRequest('run-1', runKey.proveRequest('run-1', now), publicKey, now, window)).toBe(true);
    expect(verifyRunRequest('run-1', runKey.proveRequest('run-1', now + window), publicKey, now, window)).toBe(true);
    expect(verifyRunRequest('run-1', runKey.proveRequest('run-1', now - window), publicKey, now, window)).toBe(true);
  });

  it('does not verify for another run, outside the window, under another key, with its time changed, or malformed', () => {
    const proof = runKey.proveRequest('run-1', now);
    expect(verifyRunRequest('run-2', proof, publicKey, now, window)).toBe(false);
    expect(verifyRunRequest('run-1', runKey.proveRequest('run-1', now - window - 1), publicKey, now, window)).toBe(false);
    expect(verifyRunRequest('run-1', RunKey.generate().proveRequest('run-1', now), publicKey, now, window)).toBe(false);
    expect(verifyRunRequest('run-1', proof.replace(String(now), String(now + 1)), publicKey, now, window)).toBe(false);
    for (const text of ['', '.', 'x.y', `${now}.`, `${now}`, `-1.${proof.split('.')[1] ?? ''}`])
      expect(verifyRunRequest('run-1', text, publicKey, now, window)).toBe(false);
    expect(verifyRunRequest('run-1', proof, undefined, now, window)).toBe(false);
  });
});
