import { canonicalJson, sha256Hex } from '@gatehouse/contracts';
import type { Catalog } from '@gatehouse/contracts';
import type { TraceCatalog } from './trace-format.js';

/**
 * What a trace remembers of the catalog it was recorded against: per tool its address, effect,
 * approval rule, retirement and a hash of its input schema; and one SHA-256 over the canonical JSON
 * of every tool's address, effect, approval, retired, input and output. Descriptions and titles are
 * wording, not contract, and stay out of the hash.
 */
export function catalogFingerprint(catalog: Catalog): TraceCatalog {
  const tools = catalog.tools();
  const contract = tools.map((t) => ({
    address: t.address,
    effect: t.effect,
    approval: t.approval ?? null,
    retired: t.retired === true,
    input: t.input,
    output: t.output,
  }));
  return {
    sha256: sha256Hex(canonicalJson(contract)),
    tools: tools.map((t) => ({
      address: t.address,
      effect: t.effect,
      approval: t.approval ?? null,
      retired: t.retired === true,
      input_sha256: sha256Hex(canonicalJson(t.input)),
    })),
  };
}
