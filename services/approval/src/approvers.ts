import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { APPROVERS_SCHEMA } from '@gatehouse/governance';
import type { MappedPerson } from '@gatehouse/identity';

/**
 * A person who may decide on proposals: who they are (issuer and subject), how they are shown,
 * which roles they hold and which tenants they see, as the approver policy maps their claims.
 */
export interface Approver extends MappedPerson {
  /** A demo approver whose token is published in the README; never for production. */
  readonly demo: boolean;
}

/** The issuer named for approvers of a token file: they are vouched for by that file only. */
export const TOKEN_FILE_ISSUER = 'urn:gatehouse:approver-tokens';

interface ApproverEntry {
  readonly identity: string;
  readonly token_sha256: string;
  readonly roles: string[];
  readonly tenants: string[];
  readonly demo?: boolean;
  readonly note?: string;
}

const validate = new Ajv2020({ strict: true, allErrors: true }).compile(APPROVERS_SCHEMA);
const isApproversDocument = (value: unknown): value is { approvers: ApproverEntry[] } => validate(value);

/** Lower-case hex SHA-256 of a bearer token: the only form in which tokens are stored. */
export function tokenSha256(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The approvers, looked up by the SHA-256 of their bearer token. The file holds hashes only, so
 * reading it never yields a usable token, and the lookup compares hashes, not secrets.
 */
export class Approvers {
  private constructor(private readonly byHash: ReadonlyMap<string, Approver>) {}

  /** Checks an approvers document (Ajv, then unique identities and token hashes); throws listing every problem. */
  static parse(document: unknown): Approvers {
    if (!isApproversDocument(document)) {
      const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
      throw new Error(`approvers file is invalid: ${problems.join('; ')}`);
    }
    const entries = document.approvers;
    const problems: string[] = [];
    const byHash = new Map<string, Approver>();
    const identities = new Set<string>();
    for (const entry of entries) {
      if (identities.has(entry.identity)) problems.push(`identity ${entry.identity} is listed twice`);
      if (byHash.has(entry.token_sha256)) problems.push(`approver ${entry.identity} shares a token with another approver`);
      identities.add(entry.identity);
      byHash.set(entry.token_sha256, {
        identity: entry.identity,
        issuer: TOKEN_FILE_ISSUER,
        subject: entry.identity,
        name: null,
        authTime: null,
        roles: Object.freeze([...entry.roles]),
        tenants: Object.freeze([...entry.tenants]),
        demo: entry.demo ?? false,
      });
    }
    if (problems.length > 0) throw new Error(`approvers file is invalid: ${problems.join('; ')}`);
    return new Approvers(byHash);
  }

  static load(path: string): Approvers {
    return Approvers.parse(JSON.parse(readFileSync(path, 'utf8')) as unknown);
  }

  /** The approver holding `token`, or undefined. */
  authenticate(token: string): Approver | undefined {
    if (token.length === 0 || token.length > 512) return undefined;
    return this.byHash.get(tokenSha256(token));
  }

  /** The approver of an `Authorization: Bearer …` header, or undefined. */
  fromAuthorization(header: string | undefined): Approver | undefined {
    if (header === undefined || !header.startsWith('Bearer ')) return undefined;
    return this.authenticate(header.slice(7).trim());
  }

  list(): readonly Approver[] {
    return [...this.byHash.values()];
  }
}
