import type { Message as WireMessage } from '@platformatic/kafka';
import type { IHeaders } from 'kafkajs';

/** A record as the wire client hands it over: key, value and header names and values as bytes. */
export type WireMessageOf = WireMessage<Buffer, Buffer, Buffer, Buffer>;

/**
 * A consumed record as Gatehouse's handlers and dead letters read it: its offset and timestamp as
 * decimal strings, its headers by name (a name the record repeats keeps every value, in order).
 */
export interface ReadRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: IHeaders;
  readonly offset: string;
  readonly timestamp: string;
}

/**
 * Headers by name. The object has no prototype: a hostile record can name a header `__proto__` or
 * `constructor`, which on a plain object would set its prototype or shadow an inherited function.
 */
function headersByName(entries: Iterable<readonly [Buffer, Buffer]>): IHeaders {
  const headers = Object.create(null) as IHeaders;
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
