import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, runCli } from '@gatehouse/cli';
import { captureIo } from './support.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

const OMAR = { issuer: 'https://idp.example/realms/acme', subject: 'person-1', name: 'Omar Ops' };

describe('gatehouse operations, as the operator the token proves', () => {
  let server: Server;
  let url: string;
  const seen: Seen[] = [];

  beforeAll(async () => {
    // The control API's operator routes as far as the CLI sees them: it answers a resolution with who resolved.
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ key: 'run_1:p_1:commit', state: 'failed', command_id: 'cmd-1', resolved_by: OMAR }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    url = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const env = (): Record<string, string> => ({ GATEHOUSE_CONTROL_URL: url, GATEHOUSE_OPERATOR_TOKEN: 'person-access-token' });
  const resolveArgs = ['operations', 'resolve', 'run_1:p_1:commit', '--state', 'failed', '--evidence', 'no row'];

  it("sends the operator's token and no name of its own, and prints who the control API recorded", async () => {
    const io = captureIo({ env: { ...env(), GATEHOUSE_CONTROL_TOKEN: 'the-control-token-of-trusted-code' } });
    expect(await runCli(resolveArgs, io)).toBe(ExitCode.ok);
    const request = seen.at(-1);
    expect(request).toMatchObject({ method: 'POST', url: '/operations/run_1%3Ap_1%3Acommit/resolve' });
    expect(request?.headers.authorization).toBe('Bearer person-access-token');
    expect(JSON.parse(request?.body ?? '{}')).toEqual({ state: 'failed', evidence: 'no row' });
    expect(io.out()).toBe(
      'run_1:p_1:commit: resolved as failed by Omar Ops (person-1 at https://idp.example/realms/acme); the result of command cmd-1 was published\n',
    );
  });

  it('needs GATEHOUSE_OPERATOR_TOKEN, and takes no --by', async () => {
    const calls = seen.length;
    const unset = captureIo({ env: { GATEHOUSE_CONTROL_URL: url, GATEHOUSE_CONTROL_TOKEN: 'the-control-token-of-trusted-code' } });
    expect(await runCli(['operations', 'show', 'run_1:p_1:commit'], unset)).toBe(ExitCode.usage);
    expect(unset.err()).toContain('GATEHOUSE_OPERATOR_TOKEN is not set');
    const named = captureIo({ env: env() });
    expect(await runCli([...resolveArgs, '--by', 'someone-else'], named)).toBe(ExitCode.usage);
    expect(seen.length).toBe(calls);
  });
});
