import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

// Values the demo's tools read and write: customer data from the seed and the agent's arguments.
const SEEDED = [
  'ul. Długa 12',
  'Rynek Główny',
  'Karl Johans',
  'marta.kowalska@example.com',
  '+48 58 555 0142',
  '2 New Street',
  '3 Human Street',
  '4 Unknown Street',
];

/** Runs a demo script with its services logging to a fresh directory; its exit code, transcript and log directory. */
async function runDemo(script: string): Promise<{ code: number | null; transcript: string; logs: string }> {
  const logs = mkdtempSync(join(tmpdir(), 'gatehouse-demo-logs-'));
  let transcript = '';
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, [script], {
      cwd: ROOT,
      env: { ...process.env, GATEHOUSE_DEMO_LOGS: logs, LOG_LEVEL: 'debug' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk: Buffer) => (transcript += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (transcript += chunk.toString('utf8')));
    child.once('exit', resolve);
  });
  return { code, transcript, logs };
}

/** Every service's log of a demo: none may hold a value the demo's tools read or wrote. */
function expectNoRawValues(logs: string, values: readonly string[]): number {
  let lines = 0;
  for (const file of readdirSync(logs).filter((f) => f.endsWith('.log'))) {
    const text = readFileSync(join(logs, file), 'utf8');
    lines += text.split('\n').filter((l) => l.length > 0).length;
    for (const value of values) expect(text.includes(value), `${file} contains "${value}"`).toBe(false);
  }
  return lines;
}

describe('the demo, end to end, and what its services log', () => {
  it('passes every step, and no raw argument or result value reaches a log line', async () => {
    const { code, transcript, logs } = await runDemo('scripts/demo.mjs');
    expect(code, transcript.slice(-3000)).toBe(0);
    expect(transcript).toContain('All 14 steps gave the expected typed result.');
    // The transcript shows the data to the person running the demo; the services' logs must not.
    expect(transcript).toContain('2 New Street');

    const files = readdirSync(logs).filter((f) => f.endsWith('.log'));
    expect(files.sort()).toEqual(['approval.log', 'customers.log', 'executor-1.log', 'policy.log']);
    expect(expectNoRawValues(logs, SEEDED)).toBeGreaterThan(50);
    const policy = readFileSync(join(logs, 'policy.log'), 'utf8');
    expect(policy).toMatch(/"arguments_sha256":"[0-9a-f]{64}"/);
  }, 240_000);

  // Run after the first demo (same ports), in the same file so the two never overlap.
  it('drives one agent session through the MCP front door, approval included, and logs no raw value', async () => {
    const { code, transcript, logs } = await runDemo('scripts/demo-mcp.mjs');
    expect(code, transcript.slice(-3000)).toBe(0);
    expect(transcript).toMatch(/All \d+ MCP steps gave the expected result\./);
    expect(transcript).toContain('5 Protocol Street');
    expect(
      readdirSync(logs)
        .filter((f) => f.endsWith('.log'))
        .sort(),
    ).toEqual(['approval.log', 'customers.log', 'executor-1.log', 'mcp.log', 'policy.log']);
    expect(expectNoRawValues(logs, [...SEEDED.slice(0, 5), '5 Protocol Street'])).toBeGreaterThan(30);
    // The token is shown once, to the person who registered the run, and never logged.
    const token = /token (ghr_[\w-]{4})…/.exec(transcript)?.[1];
    expect(token).toBeDefined();
    expect(expectNoRawValues(logs, [token ?? 'ghr_'])).toBeGreaterThan(0);
  }, 240_000);
});
