// A pack in its own repository, as a platform team writes one: scaffolded by `gatehouse pack init` in
// a folder outside this checkout, with @gatehouse/sdk and @gatehouse/client installed by npm from the
// tarballs `scripts/pack-package.mjs` makes — no workspace link, nothing resolved from this
// repository. It type-checks against the tarball's types, runs its own checks with
// @gatehouse/sdk/testing, passes `gatehouse pack check`, and the unchanged services host it while
// the installed client calls its tools.
import { execFile } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as InstalledClient from '@gatehouse/client';
import { loadToolPack } from '@gatehouse/runtime';
import { startPackGatehouse } from './support/pack-harness.js';
import type { PackGatehouse } from './support/pack-harness.js';
import { TEST_KEY_RING } from './support/signing.js';
import { config, logger } from './support/stack.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const NPM_MS = 180_000;

/** Runs a command to its end; a failure carries its output. */
async function sh(command: string, args: readonly string[], cwd: string, timeout = 60_000): Promise<string> {
  try {
    const { stdout } = await run(command, args, {
      cwd,
      timeout,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    return stdout;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, { cause: error });
  }
}

/** What the pack's own check script (written below) reports. */
interface OwnCheck {
  readonly tools: string[];
  readonly cases: number;
  readonly wrong: string[];
  readonly problems: string[];
  readonly ticket: unknown;
  readonly missing: { code: string; retryable: boolean };
}

// The pack's own test, as its author would write it with @gatehouse/sdk/testing (in plain Node, so
// that nothing but the installed tarball is in play).
const OWN_CHECK = `
import { isToolFailure } from '@gatehouse/sdk';
import { contractCases, contractVerdict, hostPackForTest, testContext } from '@gatehouse/sdk/testing';
import { outsideToolsPack } from './src/index.js';

const hosted = await hostPackForTest(outsideToolsPack, { TICKETS_SEED: '2' });
const { cases, problems } = contractCases(hosted.catalog);
const wrong = cases.filter((c) => contractVerdict(hosted.catalog, c) !== c.expected).map((c) => c.tool + ' ' + c.name);
const getTicket = hosted.implementation('get_ticket.v1');
const ticket = await getTicket.run({ ticket_id: 'T-1' }, testContext());
const missing = await getTicket.run({ ticket_id: 'T-9' }, testContext()).then(() => null, (e) => (isToolFailure(e) ? e.error : String(e)));
process.stdout.write(JSON.stringify({ tools: hosted.catalog.tools().map((t) => t.address), cases: cases.length, wrong, problems, ticket, missing }));
`;

describe('a pack outside the repository, on the SDK and client installed from their tarballs', () => {
  const outside = mkdtempSync(join(tmpdir(), 'gatehouse-outside-'));
  const packDir = join(outside, 'outside-tools');
  let g: PackGatehouse | undefined;

  beforeAll(async () => {
    const [sdk, client] = await Promise.all(
      ['packages/sdk', 'packages/client'].map(async (dir) =>
        (await sh(process.execPath, ['scripts/pack-package.mjs', dir, '--out', join(outside, 'packed')], ROOT)).trim(),
      ),
    );
    await sh(process.execPath, [join(ROOT, 'packages/cli/bin/gatehouse.mjs'), 'pack', 'init', packDir], outside);
    await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', sdk ?? '', client ?? ''], packDir, NPM_MS);
    writeFileSync(join(packDir, 'own-check.mjs'), OWN_CHECK);
  }, NPM_MS + 60_000);

  afterAll(async () => {
    await g?.stop();
    rmSync(outside, { recursive: true, force: true });
  });

  it('installs copies, not links into this checkout, with the Gatehouse packages they build on inside them', () => {
    for (const name of ['sdk', 'client']) {
      const installed = join(packDir, 'node_modules', '@gatehouse', name);
      expect(lstatSync(installed).isSymbolicLink(), name).toBe(false);
      expect(realpathSync(installed).startsWith(ROOT), name).toBe(false);
    }
    const manifest = JSON.parse(readFileSync(join(packDir, 'node_modules/@gatehouse/sdk/package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      name: '@gatehouse/sdk',
      version: '0.1.0',
      bundleDependencies: ['@gatehouse/contracts', '@gatehouse/governance', '@gatehouse/identity', '@gatehouse/testkit'],
    });
    expect(manifest.private).toBeUndefined();
    expect(Object.keys(manifest.exports as object)).toEqual(['.', './testing', './schemas/*']);
    expect(readFileSync(join(packDir, 'node_modules/@gatehouse/sdk/CHANGELOG.md'), 'utf8')).toContain('## 0.1.0');
  });

  it("carries the wire contract inside the client's events package: every Avro schema of the top-level schemas/", () => {
    const events = join(packDir, 'node_modules/@gatehouse/client/node_modules/@gatehouse/events');
    const avro = (dir: string): string[] =>
      readdirSync(dir)
        .filter((file) => file.endsWith('.avsc'))
        .sort();
    expect(avro(join(events, 'schemas'))).toEqual(avro(join(ROOT, 'schemas')));
    expect(avro(join(ROOT, 'schemas'))).toHaveLength(6);
  });

  it("names, in each of the pack's documents, a JSON Schema the installed SDK ships", () => {
    for (const document of ['roles.json', 'policy-table.json', 'approvers.json', 'approver-policy.json']) {
      const { $schema } = JSON.parse(readFileSync(join(packDir, 'config', document), 'utf8')) as { $schema: string };
      const published = JSON.parse(readFileSync(resolve(packDir, 'config', $schema), 'utf8')) as { $schema: string; title: string };
      expect(published, document).toMatchObject({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        title: expect.stringMatching(/^Gatehouse /) as unknown,
      });
    }
  });

  it("type-checks the scaffold's JavaScript against the types the tarball ships", async () => {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const args = [
      '--noEmit',
      '--allowJs',
      '--checkJs',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--skipLibCheck',
      '--types',
      'node',
      '--typeRoots',
      join(ROOT, 'node_modules/@types'),
      'src/index.js',
    ];
    await expect(sh(process.execPath, [tsc, ...args], packDir, 120_000)).resolves.toBe('');
  }, 150_000);

  it("runs the pack's own checks with @gatehouse/sdk/testing: every contract case judged as expected, a handler called", async () => {
    const own = JSON.parse(await sh(process.execPath, ['own-check.mjs'], packDir)) as OwnCheck;
    expect(own.tools).toEqual(['commit_ticket_priority_change.v1', 'get_ticket.v1', 'preview_ticket_priority_change.v1']);
    expect(own.problems).toEqual([]);
    expect(own.wrong).toEqual([]);
    expect(own.cases).toBeGreaterThan(20);
    expect(own.ticket).toMatchObject({ ticket_id: 'T-1' });
    expect(own.missing).toMatchObject({ code: 'NOT_FOUND', retryable: false });
  });

  it('passes gatehouse pack check', async () => {
    const report = JSON.parse(
      await sh(process.execPath, [join(ROOT, 'packages/cli/bin/gatehouse.mjs'), 'pack', 'check', '.', '--json'], packDir, 120_000),
    ) as {
      name: string;
      checks: { check: string; result: string }[];
    };
    expect(report.name).toBe('outside-tools');
    expect(report.checks.filter((row) => row.result !== 'ok')).toEqual([]);
  }, 150_000);

  it('is hosted by the unchanged services, and the installed client calls its read', async () => {
    const pack = await loadToolPack(packDir);
    g = await startPackGatehouse('outside', pack, { env: {} });
    const agent = await g.createRun('ticket-reader', { principal: 'agent:outside-bot' });
    const installed = (await import(
      pathToFileURL(join(packDir, 'node_modules/@gatehouse/client/dist/index.js')).href
    )) as typeof InstalledClient;
    const client = await installed.createClient({
      config,
      topics: g.topics,
      controlUrl: g.policy.url,
      clientId: 'test-outside',
      logger,
      defaultTimeoutMs: 30_000,
      resultKeys: TEST_KEY_RING,
    });
    try {
      // The installed client proves the run's commands with the key its registration returned.
      const run = { runId: agent.run_id, runKey: agent.run_key, tenant: agent.tenant };
      const found = await client.call('get_ticket.v1', { ticket_id: 'T-2' }, run);
      expect(found).toMatchObject({ ok: true, tool: 'get_ticket.v1', result: { ticket_id: 'T-2' } });
      const refused = await client.call('preview_ticket_priority_change.v1', { ticket_id: 'T-2', priority: 'high' }, run);
      expect(refused).toMatchObject({ ok: false, error: { code: 'CAPABILITY_DENIED' } });
    } finally {
      await client.close();
    }
  }, 120_000);
});
