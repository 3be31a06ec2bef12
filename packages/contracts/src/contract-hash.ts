import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical.js';
import type { ToolContract } from './define-tool.js';

const hashes = new WeakMap<ToolContract, string>();

/**
 * The sha256 (hex) of what a tool version says: every field of its contract (schemas, description,
 * effect, limits, its pair), as RFC 8785 canonical JSON. Whether a version is retired is left out:
 * retiring changes when a tool may be called, not what it is. Two services that host one address
 * with different hashes host two different tools under one name.
 */
export function contractSha256(contract: ToolContract): string {
  const known = hashes.get(contract);
  if (known !== undefined) return known;
  const said = {
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
  const hash = createHash('sha256').update(canonicalJson(said), 'utf8').digest('hex');
  hashes.set(contract, hash);
  return hash;
}
