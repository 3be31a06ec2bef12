import { describe, expect, it } from 'vitest';
import { isSelfApproval } from '../src/index.js';

const ISSUER = 'https://idp.example/realms/acme';
const owner = { issuer: ISSUER, subject: 'sub-owner' };

describe('the four-eyes rule over IdP identities', () => {
  it('refuses the person a run acts on behalf of, by issuer and subject', () => {
    expect(isSelfApproval(owner, { issuer: ISSUER, subject: 'sub-owner' })).toBe(true);
  });

  it('lets another person decide, even one of the same subject at another issuer', () => {
    expect(isSelfApproval(owner, { issuer: ISSUER, subject: 'sub-lead' })).toBe(false);
    expect(isSelfApproval(owner, { issuer: 'https://other.example', subject: 'sub-owner' })).toBe(false);
  });

  it('compares nothing when the run names no person or the approver has no IdP identity (a demo token)', () => {
    expect(isSelfApproval(null, { issuer: ISSUER, subject: 'sub-owner' })).toBe(false);
    expect(isSelfApproval(undefined, owner)).toBe(false);
    expect(isSelfApproval(owner, { issuer: undefined, subject: undefined })).toBe(false);
    expect(isSelfApproval(owner, null)).toBe(false);
  });
});
