// `gatehouse approvals sign-in`: the device authorization grant (RFC 8628) against the stack's
// Keycloak, then approvals with the token it prints, as the person who signed in.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run } from '@gatehouse/state';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { completeDeviceSignIn, ISSUER, orchestratorToken, PEOPLE } from './support/identity.js';
import type { Person } from './support/identity.js';
import { pollUntil } from './support/poll.js';
import { currentVersion, preview } from './support/writes.js';

const MAIN = fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url));

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function gatehouse(args: readonly string[], env: Readonly<Record<string, string>>, onStderr?: (text: string) => void): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, timeout: 50_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      onStderr?.(stderr);
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the CLI signs its person in with the device grant and approves as them', () => {
  let g: Gatehouse;
  let env: Record<string, string>;
  let run: Run;

  beforeAll(async () => {
    g = await startGatehouse('clisignin', { approval: true, identity: true });
    env = { GATEHOUSE_OIDC_ISSUER: ISSUER, GATEHOUSE_APPROVAL_URL: g.approval?.url ?? '' };
    const response = await fetch(`${g.policies[0]?.url ?? ''}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await orchestratorToken()}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        tenant: 'acme',
        principal: 'agent:support-bot',
        role: 'support-agent',
        environment: 'production',
        ttl_ms: 600_000,
        on_behalf_of: { issuer: ISSUER, subject: PEOPLE.owner.subject, name: PEOPLE.owner.name },
      }),
    });
    run = (await response.json()) as Run;
    g.client.holdRunKey(run.run_id, (run as Run & { run_key: string }).run_key);
  });
  afterAll(async () => {
    await g?.stop();
  });

  /** Runs `approvals sign-in` and completes it as `person` once it prints where to go. */
  async function signIn(person: Person): Promise<string> {
    let completing: Promise<void> | undefined;
    const signedIn = await gatehouse(['approvals', 'sign-in'], env, (stderr) => {
      const url = /open (\S+)/.exec(stderr)?.[1];
      const code = /enter the code (\S+)/.exec(stderr)?.[1];
      if (completing === undefined && url !== undefined && code !== undefined) completing = completeDeviceSignIn(url, person, code);
    });
    await completing;
    expect(signedIn.code, signedIn.stderr).toBe(0);
    expect(signedIn.stderr).toMatch(/To sign in, open http:\/\/127\.0\.0\.1:18080\/realms\/gatehouse\/device/);
    return signedIn.stdout.trim();
  }

  it('approves with the token of the person who signed in, and refuses the run’s own person', async () => {
    const proposalId = await preview(g, run, '5 Device Lane');
    const settled = g.client.call(
      'commit_address_change.v2',
      { proposal_id: proposalId },
      { runId: run.run_id, tenant: run.tenant, timeoutMs: 60_000 },
    );

    const ownerToken = await signIn(PEOPLE.owner);
    const shown = await pollUntil(
      async () => {
        const answer = await gatehouse(['approvals', 'show', proposalId], { ...env, GATEHOUSE_APPROVER_TOKEN: ownerToken });
        return answer.code === 0 ? answer : undefined;
      },
      20_000,
      'the pending request',
    );
    expect(shown.stdout).toMatch(
      /^on behalf of:\s+Otto Owner \(7b0c1d52-5a4e-4e0b-9d51-1a0e5c1ea005 at http:\/\/127\.0\.0\.1:18080\/realms\/gatehouse\)$/m,
    );
    const own = await gatehouse(['approvals', 'approve', proposalId], { ...env, GATEHOUSE_APPROVER_TOKEN: ownerToken });
    expect(own.code).toBe(1);
    expect(own.stderr).toContain('403 SELF_APPROVAL');
    expect(await currentVersion(g)).toBe(17);

    const leadToken = await signIn(PEOPLE.lead);
    const approved = await gatehouse(['approvals', 'approve', proposalId, '--json'], { ...env, GATEHOUSE_APPROVER_TOKEN: leadToken });
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({
      state: 'approved',
      decided_by: PEOPLE.lead.username,
      decider: { issuer: ISSUER, subject: PEOPLE.lead.subject },
    });
    expect((await settled).ok).toBe(true);
  });

  it('exits 2 without an identity provider to sign in at', async () => {
    const refused = await gatehouse(['approvals', 'sign-in'], { GATEHOUSE_OIDC_ISSUER: '' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('GATEHOUSE_OIDC_ISSUER is not set');
  });
});
