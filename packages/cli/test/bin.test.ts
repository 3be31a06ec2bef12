import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('the gatehouse command', () => {
  it('is linked by npm install and runs the compiled CLI', () => {
    const run = spawnSync(`${root}node_modules/.bin/gatehouse`, ['--help'], { cwd: root, encoding: 'utf8' });
    expect(run.error).toBeUndefined();
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Usage: gatehouse /m);
  });
});
