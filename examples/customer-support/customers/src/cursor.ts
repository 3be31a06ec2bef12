import { createHmac, timingSafeEqual } from 'node:crypto';
import { ServiceError } from './errors.js';
import type { OrderPosition } from './order-repository.js';

/** What a cursor is bound to: a cursor from one listing is refused by another. */
export interface CursorScope {
  readonly tenant: string;
  readonly customerId: string;
  readonly state: string;
}

const POSITION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const TAG_BYTES = 16;

/**
 * Opaque, signed keyset cursors: `base64url(JSON position) . base64url(HMAC-SHA256 tag)`.
 * The tag covers the position and its scope, so an edited or transplanted cursor is refused.
 */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(scope: CursorScope, position: OrderPosition): string {
    const payload = Buffer.from(JSON.stringify({ p: position.placedAt, o: position.orderId })).toString('base64url');
    return `${payload}.${this.tag(scope, payload).toString('base64url')}`;
  }

  decode(scope: CursorScope, cursor: string): OrderPosition {
    const [payload, tag, extra] = cursor.split('.');
    if (payload === undefined || tag === undefined || extra !== undefined) throw tampered();
    const given = Buffer.from(tag, 'base64url');
    const expected = this.tag(scope, payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw tampered();
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch (cause) {
      throw tampered(cause);
    }
    const { p, o } = (decoded ?? {}) as { p?: unknown; o?: unknown };
    if (typeof p !== 'string' || !POSITION.test(p) || typeof o !== 'string' || o.length === 0) throw tampered();
    return { placedAt: p, orderId: o };
  }

  private tag(scope: CursorScope, payload: string): Buffer {
    return createHmac('sha256', this.secret)
      .update(JSON.stringify([scope.tenant, scope.customerId, scope.state, payload]))
      .digest()
      .subarray(0, TAG_BYTES);
  }
}

function tampered(cause?: unknown): ServiceError {
  return new ServiceError(
    'INVALID_REQUEST',
    'cursor is not one this listing issued',
    { field: 'cursor' },
    cause === undefined ? undefined : { cause },
  );
}
