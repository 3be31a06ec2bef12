import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** Why a receiver refused a notification. */
export type WebhookRefusal = 'WEBHOOK_SIGNATURE_INVALID' | 'WEBHOOK_REPLAYED';

export type WebhookReceipt =
  | { readonly ok: true; readonly id: string; readonly type: string; readonly data: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly code: WebhookRefusal; readonly message: string };

// Standard Webhooks' tolerance for a timestamp's age; an id is remembered at least this long.
const TOLERANCE_MS = 5 * 60_000;

/**
 * The receiving side of the approval service's webhooks (Standard Webhooks): checks the signature
 * with the endpoint's secret and the timestamp (at most 5 minutes off), and refuses an id it took
 * before, so a captured notification replayed is never acted on twice. Answer a replay 2xx (it was
 * delivered already) and act only on `ok`.
 */
export class WebhookReceiver {
  private readonly webhook: Webhook;
  private readonly seen = new Map<string, number>();

  constructor(secret: string) {
    this.webhook = new Webhook(secret);
  }

  receive(headers: Readonly<Record<string, string | string[] | undefined>>, body: string, now = Date.now()): WebhookReceipt {
    const header = (name: string): string => {
      const value = headers[name];
      return (Array.isArray(value) ? value[0] : value) ?? '';
    };
    let payload: unknown;
    try {
      payload = this.webhook.verify(body, {
        'webhook-id': header('webhook-id'),
        'webhook-timestamp': header('webhook-timestamp'),
        'webhook-signature': header('webhook-signature'),
      });
    } catch (error) {
      const message = error instanceof WebhookVerificationError ? error.message : 'the body is not JSON';
      return { ok: false, code: 'WEBHOOK_SIGNATURE_INVALID', message };
    }
    const id = header('webhook-id');
    for (const [known, until] of this.seen) if (until < now) this.seen.delete(known);
    if (this.seen.has(id)) return { ok: false, code: 'WEBHOOK_REPLAYED', message: `notification ${id} was received before` };
    this.seen.set(id, now + 2 * TOLERANCE_MS);
    const { type, data } = payload as { type?: unknown; data?: unknown };
    return {
      ok: true,
      id,
      type: typeof type === 'string' ? type : '',
      data: typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {},
    };
  }
}
