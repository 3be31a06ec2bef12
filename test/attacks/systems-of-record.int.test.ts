// Surface: the customers service's read routes (docs/threat-model.md, "R3"). The attacker holds
// exactly one fresh read assertion, minted by a real executor for one customer, as the handler that
// asked for it or anyone on the network path between the executor and the service sees it, and can
// reach the service. The promise: a read assertion serves the one request it names — its method,
// path and query — once, across every replica of the service.
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customersConfigFromEnv, SEED, startCustomersService, tablesIn } from '@gatehouse/customers';
import type { RunningCustomersService } from '@gatehouse/customers';
import type { Run } from '@gatehouse/state';
import { decodeJwt } from 'jose';
import { DATABASE_URL } from '../support/approval.js';
import { startGatehouse } from '../support/gatehouse.js';
import type { Gatehouse } from '../support/gatehouse.js';
import { TEST_ASSERTION_ISSUER, testJwksFile } from '../support/signing.js';
import { logger } from '../support/stack.js';

/** A request as the network path saw it on its way to the service. */
interface Taken {
  readonly method: string;
  readonly target: string;
  readonly authorization: string;
}

/**
 * The network path between the executor and the customers service, held by the attacker: it keeps
 * each request's assertion and delivers nothing (the handler gets a 404), so every assertion it
 * takes is fresh — never presented to the service.
 */
class Wiretap {
  readonly #taken: Taken[] = [];
  readonly #waiting: ((taken: Taken) => void)[] = [];
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
    server.on('request', (request: IncomingMessage, response) => {
      const taken = { method: request.method ?? '', target: request.url ?? '', authorization: request.headers.authorization ?? '' };
      const waiter = this.#waiting.shift();
      if (waiter === undefined) this.#taken.push(taken);
      else waiter(taken);
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"NOT_FOUND","message":"taken"}}');
    });
  }

  static async start(): Promise<Wiretap> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new Wiretap(server);
  }

  get url(): string {
    const address = this.#server.address();
    return typeof address === 'object' && address !== null ? `http://127.0.0.1:${address.port}` : '';
  }

  /** The next request to pass, however soon it comes; rejects after `timeoutMs`. */
  next(timeoutMs = 20_000): Promise<Taken> {
    const ready = this.#taken.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise<Taken>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no request passed the wiretap within ${timeoutMs} ms`)), timeoutMs);
      this.#waiting.push((taken) => {
        clearTimeout(timer);
        resolve(taken);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly body: unknown;
}

/** Sends `method path` to a replica with the stolen `Authorization` header, as the attacker does. */
async function present(replica: RunningCustomersService, method: string, path: string, authorization: string): Promise<Answer> {
  const response = await fetch(`${replica.url}${path}`, { method, headers: { authorization, 'x-tenant': 'acme' } });
  const text = await response.text();
  return { status: response.status, text, body: text === '' ? undefined : JSON.parse(text) };
}

/** The count of refusals by code on a replica's /metrics. */
async function refusalCount(replica: RunningCustomersService, code: string): Promise<number> {
  const text = await (await fetch(`${replica.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`gatehouse_call_refusals_total{code="${code}"}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/** A refusal with nothing of any record in it: the error, and no more. */
const refusal = (code: string) => ({ error: { code, message: expect.any(String) as string, retryable: false } });

const OTHER = 'C-1001';

describe('a fresh read assertion taken off the wire, presented to the customers service', () => {
  let g: Gatehouse;
  let run: Run;
  let wiretap: Wiretap;
  const schema = `t_atk_sor_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const replicas: RunningCustomersService[] = [];
  const db = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });

  beforeAll(async () => {
    g = await startGatehouse('atk-sor');
    run = await g.createRun('ops-admin', { principal: 'agent:ops-bot' });
    wiretap = await Wiretap.start();
    process.env['CUSTOMERS_URL'] = wiretap.url;
    // Two replicas of one customers service: one schema, one database, each its own process state.
    const config = customersConfigFromEnv({
      DATABASE_URL,
      CUSTOMERS_DB_SCHEMA: schema,
      CUSTOMERS_PORT: '0',
      CUSTOMERS_ASSERTION_KEYS: testJwksFile(),
      CUSTOMERS_ASSERTION_ISSUER: TEST_ASSERTION_ISSUER,
    });
    replicas.push(await startCustomersService(config, logger));
    replicas.push(await startCustomersService(config, logger));
  });
  afterAll(async () => {
    if (g !== undefined) process.env['CUSTOMERS_URL'] = g.customers.url;
    for (const replica of replicas) await replica.close();
    await db.query(`DROP SCHEMA IF EXISTS ${tablesIn(schema).schema} CASCADE`);
    await db.end();
    await wiretap?.close();
    await g?.stop();
  });

  /**
   * The assertion the executor mints for `get_customer.v1` of `customerId`, taken on its way: the
   * handler's request never arrives, so the assertion is fresh.
   */
  async function take(customerId: string): Promise<Taken> {
    const passing = wiretap.next();
    const call = g.client.call('get_customer.v1', { customer_id: customerId }, { runId: run.run_id, tenant: 'acme' });
    const taken = await passing;
    expect((await call).ok).toBe(false);
    expect(taken).toMatchObject({ method: 'GET', target: `/customers/${customerId}` });
    // The executor named that request in the assertion: the attacker can read, not change, it.
    expect(decodeJwt(taken.authorization.replace(/^Bearer /, ''))).toMatchObject({
      call: 'read',
      tenant: 'acme',
      method: 'GET',
      target: `/customers/${customerId}`,
    });
    return taken;
  }

  it("is refused TARGET_MISMATCH on another customer's path of the same tenant, and nothing of either record is returned", async () => {
    const [a] = replicas as [RunningCustomersService];
    const stolen = await take(SEED.customer.id);
    const answer = await present(a, 'GET', `/customers/${OTHER}`, stolen.authorization);
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 403, body: refusal('TARGET_MISMATCH') });
    expect(answer.text).not.toMatch(/Jonas|Berg|Marta|Kowalska|credit|internal_notes/);
    // Nor on a sub-resource of its own customer, or with a query it does not name.
    for (const path of [`/customers/${SEED.customer.id}/orders`, `/customers/${SEED.customer.id}?expand=orders`]) {
      const again = await present(a, 'GET', path, (await take(SEED.customer.id)).authorization);
      expect({ path, status: again.status, body: again.body }).toEqual({ path, status: 403, body: refusal('TARGET_MISMATCH') });
    }

    // The honest request — the same kind of assertion, on the request it names — is served.
    const honest = await take(SEED.customer.id);
    const served = await present(a, honest.method, honest.target, honest.authorization);
    expect({ status: served.status, id: (served.body as { id?: unknown }).id }).toEqual({ status: 200, id: SEED.customer.id });
  });

  it('is refused METHOD_MISMATCH with another method on the path it names', async () => {
    const [a] = replicas as [RunningCustomersService];
    const counted = await refusalCount(a, 'METHOD_MISMATCH');
    const stolen = await take(SEED.customer.id);
    // HEAD is served by the GET route; its answer has no body, so the refusal is read from the service's count.
    const answer = await present(a, 'HEAD', stolen.target, stolen.authorization);
    expect({ status: answer.status, text: answer.text }).toEqual({ status: 403, text: '' });
    expect(await refusalCount(a, 'METHOD_MISMATCH')).toBe(counted + 1);

    const honest = await take(SEED.customer.id);
    expect((await present(a, 'GET', honest.target, honest.authorization)).status).toBe(200);
  });

  it('is refused ASSERTION_REPLAYED by a second replica once the first has served it, and is remembered in PostgreSQL', async () => {
    const [a, b] = replicas as [RunningCustomersService, RunningCustomersService];
    const stolen = await take(SEED.customer.id);
    const first = await present(a, stolen.method, stolen.target, stolen.authorization);
    expect({ status: first.status, id: (first.body as { id?: unknown }).id }).toEqual({ status: 200, id: SEED.customer.id });

    const counted = await refusalCount(b, 'ASSERTION_REPLAYED');
    const replayed = await present(b, stolen.method, stolen.target, stolen.authorization);
    expect({ status: replayed.status, body: replayed.body }).toEqual({ status: 401, body: refusal('ASSERTION_REPLAYED') });
    expect(replayed.text).not.toMatch(/Marta|Kowalska/);
    expect(await refusalCount(b, 'ASSERTION_REPLAYED')).toBe(counted + 1);
    const { jti } = decodeJwt(stolen.authorization.replace(/^Bearer /, ''));
    const remembered = await db.query(`SELECT count(*)::int AS n FROM ${tablesIn(schema).seenAssertions} WHERE jti = $1`, [jti]);
    expect(remembered.rows).toEqual([{ n: 1 }]);

    // The second replica serves a fresh assertion of its own.
    const honest = await take(SEED.customer.id);
    expect((await present(b, honest.method, honest.target, honest.authorization)).status).toBe(200);
  });

  it('is served once when presented to both replicas at the same moment', async () => {
    const stolen = await take(SEED.customer.id);
    const answers = await Promise.all(replicas.map((replica) => present(replica, stolen.method, stolen.target, stolen.authorization)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401]);
  });
});
