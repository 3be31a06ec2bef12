import { describe, expect, it } from 'vitest';
import { ERROR_CODE_LIST, ErrorCode, errorCodeTableMarkdown, isErrorCode } from '@gatehouse/contracts';

// The catalogue is APPEND-ONLY. Agent runtimes branch on these codes, so a code is never removed,
// renamed, reordered or reused for a new meaning. A new code is added at the END of both the
// catalogue and this list; any other change to this list is a breaking change and must not happen.
const PINNED = [
  'INVALID_ARGUMENT',
  'TOOL_NOT_FOUND',
  'TOOL_VERSION_RETIRED',
  'CAPABILITY_DENIED',
  'RUN_NOT_FOUND',
  'TENANT_MISMATCH',
  'PAYLOAD_TOO_LARGE',
  'RATE_LIMITED',
  'APPROVAL_REJECTED',
  'APPROVAL_EXPIRED',
  'PROPOSAL_NOT_FOUND',
  'PROPOSAL_CONSUMED',
  'ARGUMENTS_MISMATCH',
  'VERSION_CONFLICT',
  'IDEMPOTENCY_KEY_REUSED',
  'TIMEOUT',
  'OUTCOME_UNKNOWN',
  'OUTPUT_INVALID',
  'RESULT_TOO_LARGE',
  'NOT_FOUND',
  'UPSTREAM_ERROR',
  'POLICY_DENIED',
  'WRITE_NOT_SUPPORTED',
  'IN_PROGRESS',
  'UNAUTHORIZED_APPROVER',
  'SELF_APPROVAL',
  'OPERATION_CANCELLED',
  'TOOL_VERSION_UNAVAILABLE',
  'IDEMPOTENCY_KEY_MISSING',
  'ORDER_NOT_TRUSTED',
  'APPROVAL_NOT_FOUND',
  'CREDENTIAL_REFUSED',
  'PROPOSAL_EXPIRED',
  'CONTRACT_MISMATCH',
];

describe('error code catalogue', () => {
  it('holds exactly the pinned codes in catalogue order, so none is removed, renamed or reordered', () => {
    expect(ERROR_CODE_LIST).toEqual(PINNED);
    expect(Object.keys(ErrorCode)).toEqual(PINNED);
    expect(ERROR_CODE_LIST).toHaveLength(34);
  });

  it('gives every code a one-line meaning that ends with a period', () => {
    for (const code of ERROR_CODE_LIST) {
      const { meaning } = ErrorCode[code];
      expect(meaning, code).not.toMatch(/[\r\n]/);
      expect(meaning.trim().length, code).toBeGreaterThan(10);
      expect(meaning, code).toMatch(/\.$/);
    }
  });

  it('marks transient failures retryable and decided ones not', () => {
    for (const code of ['RATE_LIMITED', 'UPSTREAM_ERROR', 'TIMEOUT', 'IN_PROGRESS'] as const) {
      expect(ErrorCode[code].retryable, code).toBe(true);
    }
    for (const code of ['VERSION_CONFLICT', 'OUTCOME_UNKNOWN', 'INVALID_ARGUMENT', 'OUTPUT_INVALID'] as const) {
      expect(ErrorCode[code].retryable, code).toBe(false);
    }
  });

  it('recognises catalogue codes and nothing else', () => {
    expect(isErrorCode('VERSION_CONFLICT')).toBe(true);
    expect(isErrorCode('version_conflict')).toBe(false);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode(42)).toBe(false);
  });

  it('renders the README table with one row per code in catalogue order', () => {
    const lines = errorCodeTableMarkdown().trimEnd().split('\n');
    expect(lines[0]).toBe('| code | retryable | meaning |');
    expect(lines[1]).toBe('|---|---|---|');
    expect(lines.slice(2).map((line) => /^\| `([A-Z_]+)` \|/.exec(line)?.[1])).toEqual(PINNED);
    expect(lines).toContain(`| \`RATE_LIMITED\` | yes | ${ErrorCode.RATE_LIMITED.meaning} |`);
    expect(lines).toContain(`| \`VERSION_CONFLICT\` | no | ${ErrorCode.VERSION_CONFLICT.meaning} |`);
  });
});
