import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@gatehouse/telemetry';

function capture(): { lines: () => Record<string, unknown>[]; stream: Writable } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it('writes one JSON line per call with the component binding', () => {
    const out = capture();
    const log = createLogger('policy', { destination: out.stream, level: 'info' });
    log.info({ tool: 'get_customer.v1' }, 'accepted');
    const [line] = out.lines();
    expect(line).toMatchObject({ component: 'policy', tool: 'get_customer.v1', msg: 'accepted' });
  });

  it('censors raw arguments and results even when a caller logs a whole event', () => {
    const out = capture();
    const log = createLogger('executor', { destination: out.stream, level: 'info' });
    log.info({ event: { arguments: '{"line1":"1 Secret Street"}', result: '{"email":"a@b.c"}' } }, 'event');
    log.info({ arguments: 'raw', result: 'raw' }, 'flat');
    const text = JSON.stringify(out.lines());
    expect(text).not.toContain('Secret Street');
    expect(text).not.toContain('a@b.c');
    expect(text).not.toContain('"raw"');
  });
});
