/**
 * Commands prove their run. The trusted code that registers a run is given the run's own Ed25519
 * key once (`run_key`); the run record keeps only its public half. Every command sent for the run
 * carries a signature by that key over the command's fields and the partition its answers go to,
 * in a record header. An MCP front door, which acts for the runs whose tokens or sign-ins it is
 * shown, proves commands with its own signing key instead, named by key id; the policy service
 * trusts front doors' public keys (GATEHOUSE_MCP_KEYS).
 *
 * The policy service checks the proof before it stores anything for a command; one that fails
 * never speaks for the run it names. A resend (a publish retry, a task taken over) is the same
 * command with the same proof.
 */

import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { canonicalJson, GatehouseError, sha256Hex } from '@gatehouse/contracts';
import { replyPartitionOf } from '@gatehouse/telemetry';
import { describeKeyId, headerValue, signatureBytes } from './event-signing.js';
import type { SignedHeaders } from './event-signing.js';
import type { ToolCommand } from './event-types.js';
import { strictBase64 } from './signing-keys.js';
import type { TrustedKeys } from './signing-keys.js';

/** The signature of a command, base64. */
export const COMMAND_PROOF_HEADER = 'gatehouse-command-proof';
/** Present when a front door proved the command: the key id of its signing key. Absent: the run's own key. */
export const COMMAND_PROVER_HEADER = 'gatehouse-command-prover';

const COMMAND_PREFIX = 'gatehouse.tool-command.v1\n';

function wellFormed(text: string): string {
  return /[\uD800-\uDFFF]/.test(text) ? Buffer.from(text, 'utf8').toString('utf8') : text;
}

/**
 * The command with every lone surrogate in its text replaced by U+FFFD, as a sender proves and
 * sends it. UTF-8 cannot carry a lone surrogate, and how an encoder writes one decides what the
 * reader decodes (one U+FFFD or three): a sender that proved text the reader never sees would
 * never be answered, so it sends only text that reads back as it was proved.
 */
export function wellFormedCommand(command: ToolCommand): ToolCommand {
  return {
    ...command,
    command_id: wellFormed(command.command_id),
    run_id: wellFormed(command.run_id),
    tenant: wellFormed(command.tenant),
    tool: wellFormed(command.tool),
    arguments: wellFormed(command.arguments),
  };
}

/**
 * The bytes a command's proof signs: the domain prefix, then canonical JSON of its ids, tool,
 * arguments hash, times and the reply partition its answers go to. A copy re-addressed, moved to
 * another run or tenant, given other arguments or a later deadline no longer verifies.
 */
export function commandProofPayload(command: ToolCommand, replyPartition: number | null): Buffer {
  return Buffer.from(
    COMMAND_PREFIX +
      canonicalJson({
        command_id: command.command_id,
        run_id: command.run_id,
        tenant: command.tenant,
        tool: command.tool,
        arguments_sha256: sha256Hex(command.arguments),
        sent_at: command.sent_at,
        deadline_at: command.deadline_at,
        reply_partition: replyPartition,
      }),
    'utf8',
  );
}

/** An HTTP request that proves its run (`RunKey.proveRequest`): `<made at, ms>.<base64 signature>`. */
export const RUN_PROOF_HEADER = 'gatehouse-run-proof';

const REQUEST_PREFIX = 'gatehouse.run-request.v1\n';

function runRequestPayload(runId: string, madeAt: number): Buffer {
  return Buffer.from(`${REQUEST_PREFIX}${canonicalJson({ run_id: runId, made_at: madeAt })}`, 'utf8');
}

/**
 * Whether `header` proves a request for `runId` made with the run's key within `windowMs` of `now`
 * (either side: clocks differ). Never throws on what a request carries.
 */
export function verifyRunRequest(runId: string, header: string, runKey: KeyObject | undefined, now: number, windowMs: number): boolean {
  if (runKey === undefined) return false;
  const dot = header.indexOf('.');
  const madeAt = Number(header.slice(0, dot));
  if (dot <= 0 || !Number.isSafeInteger(madeAt) || Math.abs(now - madeAt) > windowMs) return false;
  const signature = signatureBytes(header.slice(dot + 1));
  if (signature === undefined) return false;
  try {
    return verify(null, runRequestPayload(runId, madeAt), runKey, signature);
  } catch {
    return false;
  }
}

/**
 * A run key that cannot be used (`RUN_KEY_INVALID`), or a command sent for a run whose key the
 * sender does not hold (`RUN_KEY_MISSING`). The message never contains key material.
 */
export class RunKeyError extends GatehouseError<'RUN_KEY_INVALID' | 'RUN_KEY_MISSING'> {}

/** Proves commands as they are sent: the proof headers of `command` routed to `replyPartition`. */
export type CommandProver = (command: ToolCommand, replyPartition: number) => Record<string, string>;

/** A run's own key, as trusted code holds it: what proves the run's commands. */
export class RunKey {
  private constructor(private readonly privateKey: KeyObject) {}

  /** A fresh key, made when a run is registered. */
  static generate(): RunKey {
    return new RunKey(generateKeyPairSync('ed25519').privateKey);
  }

  /** `run_key` as registration returned it: base64 of a PKCS#8 DER Ed25519 private key. */
  static parse(text: string): RunKey {
    const der = strictBase64(text.trim());
    if (der === undefined) throw new RunKeyError('RUN_KEY_INVALID', 'the run key is not valid base64');
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    } catch {
      throw new RunKeyError('RUN_KEY_INVALID', 'the run key is not a PKCS#8 DER private key');
    }
    if (key.asymmetricKeyType !== 'ed25519')
      throw new RunKeyError('RUN_KEY_INVALID', `the run key is ${key.asymmetricKeyType ?? 'unknown'}, not Ed25519`);
    return new RunKey(key);
  }

  /** The text trusted code is given once: base64 PKCS#8 DER. */
  text(): string {
    return this.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
  }

  /** The public half the run record keeps: base64 SPKI DER. */
  publicKey(): string {
    return createPublicKey(this.privateKey).export({ format: 'der', type: 'spki' }).toString('base64');
  }

  /**
   * The `gatehouse-run-proof` header value of a request that reads the run's own things (its tools)
   * over HTTP: when it was made, and the run key's signature over that and the run id.
   */
  proveRequest(runId: string, madeAt: number): string {
    return `${madeAt}.${sign(null, runRequestPayload(runId, madeAt), this.privateKey).toString('base64')}`;
  }

  /** The proof headers of `command` sent with its answers routed to `replyPartition`. */
  prove(command: ToolCommand, replyPartition: number | null): Record<string, string> {
    return { [COMMAND_PROOF_HEADER]: sign(null, commandProofPayload(command, replyPartition), this.privateKey).toString('base64') };
  }
}

/** A front door's proof: its own signing key, named by key id. */
export function frontDoorProof(
  keyId: string,
  privateKey: KeyObject,
  command: ToolCommand,
  replyPartition: number | null,
): Record<string, string> {
  return {
    [COMMAND_PROOF_HEADER]: sign(null, commandProofPayload(command, replyPartition), privateKey).toString('base64'),
    [COMMAND_PROVER_HEADER]: keyId,
  };
}

/** A run record's public key, parsed; undefined when the text is not one (a run registered before commands were proved). */
export function runPublicKey(text: string | null | undefined): KeyObject | undefined {
  if (typeof text !== 'string') return undefined;
  const der = strictBase64(text);
  if (der === undefined) return undefined;
  try {
    const key = createPublicKey({ key: der, format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ed25519' ? key : undefined;
  } catch {
    return undefined;
  }
}

export type CommandProofRefusal = 'unproven' | 'unknown_prover' | 'bad_proof' | 'run_has_no_key';

export type CommandProofCheck =
  | { readonly ok: true; readonly by: 'run' | 'front_door'; readonly keyId: string | null }
  | { readonly ok: false; readonly reason: CommandProofRefusal; readonly detail: string };

const refuse = (reason: CommandProofRefusal, detail: string): CommandProofCheck => ({ ok: false, reason, detail });

/**
 * Whether `command`, consumed with `headers`, was sent by whoever holds its run's key (`runKey`,
 * from the run record) or by a front door whose key `frontDoors` lists. Never throws on what a
 * record carries.
 */
export function verifyCommandProof(
  command: ToolCommand,
  headers: SignedHeaders | undefined,
  runKey: KeyObject | undefined,
  frontDoors: TrustedKeys,
): CommandProofCheck {
  const proof = headerValue(headers, COMMAND_PROOF_HEADER);
  if (proof.kind === 'absent') return refuse('unproven', `no ${COMMAND_PROOF_HEADER} header`);
  if (proof.kind === 'conflicting') return refuse('bad_proof', `${proof.count} different ${COMMAND_PROOF_HEADER} headers`);
  const signature = signatureBytes(proof.text);
  if (signature === undefined) return refuse('bad_proof', `${COMMAND_PROOF_HEADER} is not base64 of a 64-byte Ed25519 signature`);
  const prover = headerValue(headers, COMMAND_PROVER_HEADER);
  if (prover.kind === 'conflicting') return refuse('unknown_prover', `${prover.count} different ${COMMAND_PROVER_HEADER} headers`);
  let key: KeyObject;
  let keyId: string | null = null;
  if (prover.kind === 'one') {
    const held = frontDoors.get(prover.text);
    if (held === undefined) return refuse('unknown_prover', `front-door key id ${describeKeyId(prover.text)} is not trusted`);
    key = held;
    keyId = prover.text;
  } else {
    if (runKey === undefined) return refuse('run_has_no_key', 'the run has no key: it was registered before commands were proved');
    key = runKey;
  }
  let payload: Buffer;
  try {
    payload = commandProofPayload(command, replyPartitionOf(headers) ?? null);
  } catch (error) {
    return refuse('bad_proof', `the command has no signable form: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!verify(null, payload, key, signature))
    return refuse(
      'bad_proof',
      keyId === null
        ? "the proof does not match the command under the run's key"
        : `the proof does not match the command under front-door key id "${keyId}"`,
    );
  return { ok: true, by: keyId === null ? 'run' : 'front_door', keyId };
}
