import type { Message as WireMessage } from '@platformatic/kafka';

/**
 * A record's headers by name: a value as bytes or as text, or, for a name the record repeats, every
 * value in order.
 */
export interface RecordHeaders {
  [name: string]: Buffer | string | (Buffer | string)[] | undefined;
}

/** A record to produce: its key, value and headers. */
export interface OutboundRecord {
  readonly key?: Buffer | string | null;
  readonly value: Buffer | string | null;
  readonly headers?: RecordHeaders;
  /** The partition to write to; when absent, the publisher's partitioner chooses. */
  readonly partition?: number;
}

/** A record as the wire client hands it over: key, value and header names and values as bytes. */
export type WireMessageOf = WireMessage<Buffer, Buffer, Buffer, Buffer>;

/**
 * A consumed record as Gatehouse's handlers and dead letters read it: its offset and timestamp as
 * decimal strings, its headers by name (a name the record repeats keeps every value, in order).
 */
export interface ReadRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: RecordHeaders;
  readonly offset: string;
  readonly timestamp: string;
}

/**
 * Headers by name. The object has no prototype: a hostile record can name a header `__proto__` or
 * `constructor`, which on a plain object would set its prototype or shadow an inherited function.
 */
function headersByName(entries: Iterable<readonly [Buffer, Buffer]>): RecordHeaders {
  const headers = Object.create(null) as RecordHeaders;
  for (const [rawName, value] of entries) {
    const name = rawName.toString('utf8');
    const seen = headers[name];
    if (seen === undefined) headers[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else headers[name] = [seen, value];
  }
  return headers;
}

export function readRecordOf(message: WireMessageOf): ReadRecord {
  // A record without a key or a value (a tombstone) comes over as undefined.
  const { key, value } = message as { key: Buffer | undefined; value: Buffer | undefined };
  return {
    key: key ?? null,
    value: value ?? null,
    headers: headersByName(message.headerEntries),
    offset: message.offset.toString(),
    timestamp: message.timestamp.toString(),
  };
}
