import { toolError, ToolFailure } from '@gatehouse/sdk';
import type { Money } from './money-text.js';
import { REFUND_REASONS } from './schema-parts.js';
import type { RefundReason } from './schema-parts.js';

/** A JSON object of an upstream body, not yet trusted field by field. */
export type Body = Readonly<Record<string, unknown>>;

export const isBody = (value: unknown): value is Body => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `{minor, currency}` of the refunds service, or undefined when it has another shape. */
export function readMoney(value: unknown): Money | undefined {
  if (!isBody(value)) return undefined;
  const { minor, currency } = value;
  return typeof minor === 'number' && Number.isSafeInteger(minor) && typeof currency === 'string' ? { minor, currency } : undefined;
}

export function readReason(value: unknown): RefundReason | undefined {
  return REFUND_REASONS.find((reason) => reason === value);
}

export const readString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export const readInteger = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;

/** Reads an upstream body, failing (ambiguously, for writes) when its shape is not the documented one. */
export function expectShape<T>(body: unknown, check: (b: Body) => T | undefined, write: boolean): T {
  const value = isBody(body) ? check(body) : undefined;
  if (value === undefined) {
    throw new ToolFailure(toolError('UPSTREAM_ERROR', 'the refunds service answered with an unexpected shape', { retryable: !write }), {
      ambiguous: write,
    });
  }
  return value;
}
