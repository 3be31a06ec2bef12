// A system of record that trusts only the company's IdP, and the read tool that calls it with the
// token the executor exchanges for the run's person: shared by the token-exchange tests and the
// Redis attack test.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineTool, implement } from '@gatehouse/contracts';
import { AccessTokenVerifier } from '@gatehouse/identity';
import { authorizedFetch } from '@gatehouse/sdk';
import { CONTROL_TOKEN } from './gatehouse.js';
import type { Gatehouse } from './gatehouse.js';
import { ISSUER } from './identity.js';
import { TEST_ROLE } from './test-catalog.js';

export const RECORDS = { audience: 'records-service', scope: 'records.access' } as const;

/** What the records service saw of each request it served or refused. */
interface Seen {
  readonly status: number;
  readonly sub?: string;
  readonly aud?: unknown;
  readonly azp?: unknown;
  readonly scope?: unknown;
  readonly token?: string | undefined;
}

export interface RecordsService {
  readonly url: string;
  readonly seen: Seen[];
  close(): Promise<void>;
}

/** Every request must carry the IdP's token for this service; it answers record R-1 owned by the token's subject. */
export async function startRecordsService(): Promise<RecordsService> {
  const verifier = await AccessTokenVerifier.discover({ issuer: ISSUER, audience: RECORDS.audience });
  const seen: Seen[] = [];
  const server: Server = createServer((request, response) => {
    void (async () => {
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      const checked = token === undefined ? undefined : await verifier.verify(token);
      if (checked === undefined || !checked.ok) {
        seen.push({ status: 401 });
        response.writeHead(401).end();
        return;
      }
      const { sub, aud, azp, scope } = checked.claims;
      seen.push({ status: 200, sub, aud, azp, scope, token });
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ record_id: 'R-1', owner: sub }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** `read_record.v1`: reads R-1 from the records service at `url()` with the exchanged token. */
export function readRecordTool(url: () => string) {
  return implement(
    defineTool({
      name: 'read_record',
      version: 1,
      description: 'Test-only read of a record from a system of record that trusts only the IdP.',
      effect: 'read',
      retry: 'safe',
      cancel: 'none',
      timeoutMs: 5_000,
      maxResultBytes: 4_096,
      input: { type: 'object', additionalProperties: false, properties: {} },
      output: {
        type: 'object',
        additionalProperties: false,
        required: ['record_id', 'owner'],
        properties: { record_id: { type: 'string' }, owner: { type: 'string' } },
      },
    } as const),
    {
      credential: { exchange: RECORDS },
      async run(_args, context) {
        return (await authorizedFetch(context, `${url()}/records/R-1`)).json();
      },
    },
  );
}

/**
 * Registers a run of the test catalog's role for the records service, as trusted code does
 * (`body` adds to the defaults or replaces them), and holds its key in `g.client` when it is made.
 */
export async function registerRecordsRun(g: Gatehouse, body: Record<string, unknown>): Promise<Response> {
  const response = await fetch(`${g.policies[0]?.url ?? ''}/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      tenant: 'acme',
      principal: 'agent:records-bot',
      role: TEST_ROLE,
      environment: 'sandbox',
      ttl_ms: 600_000,
      ...body,
    }),
  });
  if (response.status === 201) {
    const run = (await response.clone().json()) as { run_id: string; run_key: string };
    g.client.holdRunKey(run.run_id, run.run_key);
  }
  return response;
}
