/** Why money goes back: a closed set, the same one the refunds tool pack offers the model. */
export const REFUND_REASONS = ['customer_request', 'damaged', 'not_delivered', 'duplicate_charge', 'goodwill'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];
