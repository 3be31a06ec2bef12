import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import type { Tables } from './db.js';

export interface OutboundEmail {
  readonly subject: string;
  readonly body: string;
  readonly template?: string;
}

export interface SentMessage {
  readonly message_id: string;
  readonly recipient: string;
  readonly sent_at: string;
}

/** The outbox of sent messages: a row here is the irreversible external effect. */
export class MessageRepository {
  constructor(private readonly t: Tables) {}

  async record(
    db: PoolClient,
    tenant: string,
    customerId: string,
    recipient: string,
    email: OutboundEmail,
    idempotencyKey: string,
  ): Promise<SentMessage> {
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    const inserted = await db.query<{ sent_at: Date }>(
      `INSERT INTO ${this.t.outboundMessages} (id, tenant, customer_id, recipient, subject, body, template, sent_at, idempotency_key)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now(), $8) RETURNING sent_at`,
      [id, tenant, customerId, recipient, email.subject, email.body, email.template ?? null, idempotencyKey],
    );
    const sentAt = inserted.rows[0]?.sent_at ?? new Date();
    return { message_id: id, recipient, sent_at: sentAt.toISOString() };
  }
}
