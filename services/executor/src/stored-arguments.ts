import { toolError } from '@gatehouse/contracts';
import type { Catalog, ToolContract, ValidationResult } from '@gatehouse/contracts';

/**
 * The arguments a write runs with, parsed from the stored (and re-hashed) canonical text and checked
 * against the commit's proposal schema, which may have changed since the preview stored them (an
 * executor on another pack version). A violation is OUTPUT_INVALID, not ARGUMENTS_MISMATCH: the
 * arguments still hash to what was approved; what no longer fits is the preview's output, which no
 * agent can correct by calling again — only by previewing anew (`next`).
 */
export function storedArguments(
  catalog: Catalog,
  tool: ToolContract,
  proposalId: string | null,
  canonical: string,
): ValidationResult<unknown> {
  const checked = catalog.validateProposal(tool, JSON.parse(canonical));
  if (checked.ok) return checked;
  const { message, field, details } = checked.error;
  return {
    ok: false,
    error: toolError(
      'OUTPUT_INVALID',
      `Proposal ${proposalId ?? '(implicit)'} no longer fits ${tool.address}; nothing was executed. ${message}`,
      {
        field,
        details,
        next: tool.previewedBy,
      },
    ),
  };
}
