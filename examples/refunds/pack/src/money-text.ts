import type { SchemaType } from '@gatehouse/sdk';
import type { money } from './schema-parts.js';

export type Money = SchemaType<typeof money>;

/** ISO 4217 currencies whose minor unit is not a hundredth. */
const EXPONENTS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
};

/** `{minor: 2500, currency: 'EUR'}` → `25.00 EUR`, for the sentence an approver reads. Integer arithmetic only. */
export function moneyText(amount: Money): string {
  const exponent = EXPONENTS[amount.currency] ?? 2;
  const digits = String(Math.abs(amount.minor)).padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = exponent === 0 ? '' : `.${digits.slice(digits.length - exponent)}`;
  return `${amount.minor < 0 ? '-' : ''}${whole}${fraction} ${amount.currency}`;
}
