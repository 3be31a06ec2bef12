import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical.js';
import type { ToolContract } from './define-tool.js';
import { escapePointerToken } from './schema-walk.js';

const hashes = new WeakMap<ToolContract, string>();

/**
 * What a tool version says, as plain JSON: every field of its contract (schemas, description,
 * effect, limits, its pair). Whether a version is retired is left out: retiring changes when a
 * tool may be called, not what it is. Its canonical form is what `contractSha256` hashes and what
 * a published contract keeps.
 */
export function contractStatement(contract: ToolContract): Record<string, unknown> {
  return {
    address: contract.address,
    name: contract.name,
    version: contract.version,
    title: contract.title ?? null,
    description: contract.description,
    input: contract.input,
    output: contract.output,
    effect: contract.effect,
    retry: contract.retry,
    approval: contract.approval ?? null,
    timeout_ms: contract.timeoutMs,
    rate_limit: contract.rateLimit ?? null,
    concurrency: contract.concurrency,
    cancel: contract.cancel,
    max_result_bytes: contract.maxResultBytes,
    pagination: contract.pagination ?? null,
    commits: contract.commits ?? null,
    previewed_by: contract.previewedBy ?? null,
    proposal: contract.proposal ?? null,
    external: contract.external === true,
    destructive: contract.destructive === true,
    honours_idempotency_key: contract.honoursIdempotencyKey === true,
  };
}

/**
 * The sha256 (hex) of what a tool version says: its statement (`contractStatement`) as RFC 8785
 * canonical JSON. Two services that host one address with different hashes host two different
 * tools under one name.
 */
export function contractSha256(contract: ToolContract): string {
  const known = hashes.get(contract);
  if (known !== undefined) return known;
  const hash = createHash('sha256')
    .update(canonicalJson(contractStatement(contract)), 'utf8')
    .digest('hex');
  hashes.set(contract, hash);
  return hash;
}

/**
 * Where two statements of one tool version differ, as JSON pointers into them (`/input/properties/q/maxLength`,
 * `/description`), at most `limit` of them, in the order of their keys.
 */
export function statementDifferences(published: unknown, held: unknown, limit = 10): string[] {
  const found: string[] = [];
  const walk = (a: unknown, b: unknown, at: string): void => {
    if (found.length >= limit) return;
    const objects = typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && Array.isArray(a) === Array.isArray(b);
    if (!objects) {
      if (canonicalJson(a ?? null) !== canonicalJson(b ?? null) || (a === undefined) !== (b === undefined)) found.push(at);
      return;
    }
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const key of keys)
      walk((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${at}/${escapePointerToken(key)}`);
  };
  walk(published, held, '');
  return found;
}
