import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { benchWrite } from './bench-catalog.js';
import { closedLoop } from './closed-loop.js';
import { argumentPadding } from './driver.js';
import type { LoadReport, LoadSpec } from './driver.js';

/** The anchors' arms: their read and write endpoints, called over HTTP/1.1 as a platform's services would. */
export interface HttpDriverSetup {
  readonly kind: 'http';
  readonly readUrl: string;
  readonly writeUrl: string;
}

/**
 * The load generator of the anchors: a closed loop of `inFlight` POSTs over keep-alive
 * connections, each with an idempotency key of its own (the bench's tool arguments as the body).
 * An answer other than 200 counts as an error by its status; a failed connection as `transport`.
 */
export class HttpDriver {
  private seq = 0;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1_024 });
  private readonly prefix = randomUUID().slice(0, 8);

  constructor(private readonly setup: HttpDriverSetup) {}

  /** One call: its status code, or 'transport' when the connection failed. */
  private call(url: URL, body: string): Promise<number | 'transport'> {
    const key = `${this.prefix}-${this.seq++}`;
    return new Promise((resolve) => {
      const req = request(
        url,
        {
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'idempotency-key': key },
        },
        (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode ?? 0));
          res.once('error', () => resolve('transport'));
        },
      );
      req.once('error', () => resolve('transport'));
      req.end(body);
    });
  }

  run(spec: LoadSpec): Promise<LoadReport> {
    if (spec.mode.kind !== 'closed') throw new Error('the anchors run closed loops only');
    const url = new URL(spec.tool === benchWrite.address ? this.setup.writeUrl : this.setup.readUrl);
    const payload = argumentPadding(spec.argumentBytes);
    return closedLoop(spec, spec.mode.inFlight, async () => {
      const status = await this.call(url, JSON.stringify({ seq: this.seq, payload }));
      return status === 200 ? undefined : `http_${status}`;
    });
  }

  stop(): Promise<void> {
    this.agent.destroy();
    return Promise.resolve();
  }
}
