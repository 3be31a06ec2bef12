import type { Pool, PoolClient } from 'pg';
import type { Tables } from './db.js';

export type Queryable = Pool | PoolClient;

export interface Address {
  readonly line1: string;
  readonly city: string;
  readonly country: string;
  readonly postal_code: string | null;
}

export interface SavedAddress extends Address {
  readonly address_id: string;
}

/** The full record, for trusted callers: `internal_notes` and `credit_score` included. */
export interface CustomerRecord {
  readonly id: string;
  readonly tenant: string;
  readonly name: string;
  readonly email: string;
  readonly phone: string;
  readonly shipping_address: Address;
  readonly saved_addresses: readonly SavedAddress[];
  readonly version: number;
  readonly updated_at: string;
  readonly internal_notes: string;
  readonly credit_score: number;
}

interface CustomerRow {
  id: string;
  tenant: string;
  name: string;
  email: string;
  phone: string;
  line1: string;
  city: string;
  country: string;
  postal_code: string | null;
  version: number;
  updated_at: Date;
  internal_notes: string;
  credit_score: number;
}

interface SavedAddressRow {
  address_id: string;
  line1: string;
  city: string;
  country: string;
  postal_code: string | null;
}

export class CustomerRepository {
  constructor(private readonly t: Tables) {}

  /** The customer if it belongs to `tenant`; `lock` takes a row lock (FOR UPDATE) until commit. */
  async find(db: Queryable, tenant: string, id: string, lock = false): Promise<CustomerRecord | undefined> {
    const found = await db.query<CustomerRow>(
      `SELECT id, tenant, name, email, phone, line1, city, country, postal_code, version, updated_at, internal_notes, credit_score
       FROM ${this.t.customers} WHERE id = $1 AND tenant = $2${lock ? ' FOR UPDATE' : ''}`,
      [id, tenant],
    );
    const row = found.rows[0];
    if (row === undefined) return undefined;
    const saved = await db.query<SavedAddressRow>(
      `SELECT address_id, line1, city, country, postal_code FROM ${this.t.savedAddresses} WHERE customer_id = $1 ORDER BY position`,
      [id],
    );
    return {
      id: row.id,
      tenant: row.tenant,
      name: row.name,
      email: row.email,
      phone: row.phone,
      shipping_address: { line1: row.line1, city: row.city, country: row.country, postal_code: row.postal_code },
      saved_addresses: saved.rows.map((a) => ({ ...a })),
      version: row.version,
      updated_at: row.updated_at.toISOString(),
      internal_notes: row.internal_notes,
      credit_score: row.credit_score,
    };
  }

  /** Replaces the shipping address and increments the version; returns the new version and time. */
  async replaceShippingAddress(db: PoolClient, id: string, address: Address): Promise<{ version: number; updatedAt: string }> {
    const updated = await db.query<{ version: number; updated_at: Date }>(
      `UPDATE ${this.t.customers}
       SET line1 = $2, city = $3, country = $4, postal_code = $5, version = version + 1, updated_at = now()
       WHERE id = $1 RETURNING version, updated_at`,
      [id, address.line1, address.city, address.country, address.postal_code],
    );
    const row = updated.rows[0];
    if (row === undefined) throw new Error(`customer ${id} vanished while locked`);
    return { version: row.version, updatedAt: row.updated_at.toISOString() };
  }
}
