/**
 * The Confluent wire format: one magic byte (0), a 4-byte big-endian schema id, then the Avro body.
 */
export const MAGIC_BYTE = 0;
export const HEADER_BYTES = 5;

export type WireHeader =
  { readonly ok: true; readonly schemaId: number; readonly body: Buffer } | { readonly ok: false; readonly message: string };

/** Reads the header of a record value without trusting any of it. */
export function readWireHeader(value: Buffer | null): WireHeader {
  if (value === null || value.length === 0) return { ok: false, message: 'record has no value' };
  if (value.length < HEADER_BYTES) {
    return { ok: false, message: `value of ${value.length} bytes is shorter than the 5-byte wire header` };
  }
  const magic = value.readUInt8(0);
  if (magic !== MAGIC_BYTE) {
    return { ok: false, message: `magic byte is 0x${magic.toString(16).padStart(2, '0')}, expected 0x00` };
  }
  return { ok: true, schemaId: value.readInt32BE(1), body: value.subarray(HEADER_BYTES) };
}

/** Prefixes an Avro body with the wire header of a schema id. */
export function writeWireFormat(schemaId: number, body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  out.writeUInt8(MAGIC_BYTE, 0);
  out.writeInt32BE(schemaId, 1);
  body.copy(out, HEADER_BYTES);
  return out;
}
