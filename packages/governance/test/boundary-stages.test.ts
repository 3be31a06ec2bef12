import { describe, expect, it } from 'vitest';
import { BOUNDARY_CHECKS, BOUNDARY_STAGES, stageOfRefusal, stagePosition } from '@gatehouse/governance';

describe('the boundary’s stage list', () => {
  it('runs the run, tool, argument and rate checks before a write’s proposal and policy checks', () => {
    expect(BOUNDARY_STAGES).toEqual([
      'run',
      'tenant',
      'lookup',
      'retired',
      'capability',
      'size',
      'json',
      'schema',
      'rate-limit',
      'proposal',
      'proposal-run',
      'consumed',
      'expired',
      'policy',
    ]);
    expect(BOUNDARY_CHECKS.map((check) => check.stage)).toEqual(BOUNDARY_STAGES);
    expect(BOUNDARY_STAGES.map(stagePosition)).toEqual(BOUNDARY_STAGES.map((_, i) => i));
  });

  it('maps each refusal code to the first stage that gives it', () => {
    expect(
      Object.fromEntries(
        [
          'RUN_NOT_FOUND',
          'TENANT_MISMATCH',
          'TOOL_NOT_FOUND',
          'TOOL_VERSION_RETIRED',
          'CAPABILITY_DENIED',
          'PAYLOAD_TOO_LARGE',
          'INVALID_ARGUMENT',
          'RATE_LIMITED',
          'PROPOSAL_NOT_FOUND',
          'PROPOSAL_CONSUMED',
          'PROPOSAL_EXPIRED',
          'POLICY_DENIED',
        ].map((code) => [code, stageOfRefusal(code)]),
      ),
    ).toEqual({
      RUN_NOT_FOUND: 'run',
      TENANT_MISMATCH: 'tenant',
      TOOL_NOT_FOUND: 'lookup',
      TOOL_VERSION_RETIRED: 'retired',
      CAPABILITY_DENIED: 'capability',
      PAYLOAD_TOO_LARGE: 'size',
      INVALID_ARGUMENT: 'json',
      RATE_LIMITED: 'rate-limit',
      PROPOSAL_NOT_FOUND: 'proposal',
      PROPOSAL_CONSUMED: 'consumed',
      PROPOSAL_EXPIRED: 'expired',
      POLICY_DENIED: 'policy',
    });
  });

  it('tells a proposal of another run from a missing grant by the /proposal_id field', () => {
    expect(stageOfRefusal('CAPABILITY_DENIED', '/proposal_id')).toBe('proposal-run');
    expect(stageOfRefusal('CAPABILITY_DENIED', '/anything_else')).toBe('capability');
    expect(stageOfRefusal('PROPOSAL_NOT_FOUND', '/proposal_id')).toBe('proposal');
  });

  it('tells a schema refusal, which always names a field, from arguments that are not JSON', () => {
    expect(stageOfRefusal('INVALID_ARGUMENT', '/account_id')).toBe('schema');
    expect(stageOfRefusal('INVALID_ARGUMENT', '')).toBe('schema');
    expect(stageOfRefusal('INVALID_ARGUMENT')).toBe('json');
  });

  it('knows no stage for a code the boundary never gives', () => {
    expect(stageOfRefusal('UPSTREAM_ERROR')).toBeUndefined();
    expect(stageOfRefusal('NOT_A_CODE', '/x')).toBeUndefined();
  });
});
