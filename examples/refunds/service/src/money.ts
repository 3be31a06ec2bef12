/** An amount in integer minor units of an ISO 4217 currency. */
export interface Money {
  readonly minor: number;
  readonly currency: string;
}

/** A PostgreSQL bigint (which pg returns as text) as a safe integer of minor units. */
export function minorOf(raw: string | number): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw new Error(`amount ${String(raw)} is outside the safe integer range`);
  return value;
}
