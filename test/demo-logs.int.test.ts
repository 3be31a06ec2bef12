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

describe('the demo, end to end, and what its services log', () => {
  it('passes every step, and no raw argument or result value reaches a log line', async () => {
    const logs = mkdtempSync(join(tmpdir(), 'gatehouse-demo-logs-'));
    let transcript = '';
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, ['scripts/demo.mjs'], {
        cwd: ROOT,
        env: { ...process.env, GATEHOUSE_DEMO_LOGS: logs, LOG_LEVEL: 'debug' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.on('data', (chunk: Buffer) => (transcript += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (transcript += chunk.toString('utf8')));
      child.once('exit', resolve);
    });
    expect(code, transcript.slice(-3000)).toBe(0);
    expect(transcript).toContain('All 11 steps gave the expected typed result.');
    // The transcript shows the data to the person running the demo; the services' logs must not.
    expect(transcript).toContain('2 New Street');

    const files = readdirSync(logs).filter((f) => f.endsWith('.log'));
    expect(files.sort()).toEqual(['approval.log', 'customers.log', 'executor-1.log', 'policy.log']);
    let lines = 0;
    for (const file of files) {
      const text = readFileSync(join(logs, file), 'utf8');
      lines += text.split('\n').filter((l) => l.length > 0).length;
      for (const value of SEEDED) expect(text.includes(value), `${file} contains "${value}"`).toBe(false);
    }
    expect(lines).toBeGreaterThan(50);
    const policy = readFileSync(join(logs, 'policy.log'), 'utf8');
    expect(policy).toMatch(/"arguments_sha256":"[0-9a-f]{64}"/);
  }, 240_000);
});
