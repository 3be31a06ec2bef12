import type { PoolClient } from 'pg';
import { ServiceError } from './errors.js';
import type { Address, CustomerRecord, CustomerRepository, Queryable } from './customer-repository.js';
import { failure } from './idempotent-write.js';
import type { WriteResult } from './idempotent-write.js';

export type Destination =
  | { readonly kind: 'saved'; readonly address_id: string }
  | { readonly kind: 'new'; readonly line1: string; readonly city: string; readonly country: string; readonly postal_code?: string };

export interface AddressChangePreview {
  readonly customer_id: string;
  readonly current_version: number;
  readonly before: Address;
  readonly after: Address;
  readonly changed_fields: readonly string[];
}

export interface AddressChangeCommitted {
  readonly customer_id: string;
  readonly previous_version: number;
  readonly new_version: number;
  readonly changed_fields: readonly string[];
  readonly committed_at: string;
}

/** The address a destination names, or NOT_FOUND when a saved address is not the customer's. */
function resolveDestination(customer: CustomerRecord, destination: Destination): Address {
  if (destination.kind === 'new') {
    return { line1: destination.line1, city: destination.city, country: destination.country, postal_code: destination.postal_code ?? null };
  }
  const saved = customer.saved_addresses.find((a) => a.address_id === destination.address_id);
  if (saved === undefined) {
    throw new ServiceError('NOT_FOUND', `customer ${customer.id} has no saved address ${destination.address_id}`, {
      field: 'destination.address_id',
    });
  }
  return { line1: saved.line1, city: saved.city, country: saved.country, postal_code: saved.postal_code };
}

function sameAddress(a: Address, b: Address): boolean {
  return a.line1 === b.line1 && a.city === b.city && a.country === b.country && a.postal_code === b.postal_code;
}

function customerNotFound(id: string): ServiceError {
  return new ServiceError('NOT_FOUND', `customer ${id} not found`, { field: 'customer_id' });
}

export class AddressChanges {
  constructor(private readonly customers: CustomerRepository) {}

  /** Read-only: what committing `destination` would change, against the current version. */
  async preview(db: Queryable, tenant: string, customerId: string, destination: Destination): Promise<AddressChangePreview> {
    const customer = await this.customers.find(db, tenant, customerId);
    if (customer === undefined) throw customerNotFound(customerId);
    const after = resolveDestination(customer, destination);
    return {
      customer_id: customer.id,
      current_version: customer.version,
      before: customer.shipping_address,
      after,
      changed_fields: sameAddress(customer.shipping_address, after) ? [] : ['shipping_address'],
    };
  }

  /**
   * Inside the idempotent-write transaction: locks the customer row, refuses a stale expected
   * version (VERSION_CONFLICT with current_version), else replaces the address and bumps the version.
   */
  async commit(
    db: PoolClient,
    tenant: string,
    customerId: string,
    expectedVersion: number,
    destination: Destination,
  ): Promise<WriteResult> {
    const customer = await this.customers.find(db, tenant, customerId, true);
    if (customer === undefined) return failure(customerNotFound(customerId));
    if (customer.version !== expectedVersion) {
      return failure(
        new ServiceError('VERSION_CONFLICT', `customer ${customerId} is at version ${customer.version}, not ${expectedVersion}`, {
          field: 'expected_version',
          current_version: customer.version,
        }),
      );
    }
    let after: Address;
    try {
      after = resolveDestination(customer, destination);
    } catch (error) {
      if (error instanceof ServiceError) return failure(error);
      throw error;
    }
    const changed = sameAddress(customer.shipping_address, after) ? [] : ['shipping_address'];
    const updated = await this.customers.replaceShippingAddress(db, customerId, after);
    const body: AddressChangeCommitted = {
      customer_id: customerId,
      previous_version: customer.version,
      new_version: updated.version,
      changed_fields: changed,
      committed_at: updated.updatedAt,
    };
    return { outcome: 'succeeded', httpStatus: 200, body };
  }
}
