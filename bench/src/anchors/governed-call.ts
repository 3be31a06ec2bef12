import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { PAYLOAD_INPUT } from '../bench-catalog.js';

/** The bench tools' arguments, once the schema has accepted them. */
export interface PayloadArguments {
  readonly seq: number;
  readonly payload: string;
}

/** The bench tools' answer (the catalog's ACK_OUTPUT). */
export interface Ack {
  readonly seq: number;
  readonly ok: true;
}

export const ack = (seq: number): Ack => ({ seq, ok: true });

// Compiled once, with the options Gatehouse's catalog uses: unknown fields are rejected, never dropped, defaulted or coerced.
const REFUSE_UNKNOWN = { removeAdditional: false, useDefaults: false, coerceTypes: false } as const;
const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true, ...REFUSE_UNKNOWN });
const validate = ajv.compile<PayloadArguments>(PAYLOAD_INPUT);

/** The anchors' check of a call's arguments: the arguments, or what is wrong with them (Ajv's paths and rules, never the values). */
export function checkArguments(input: unknown): { readonly args: PayloadArguments } | { readonly refusal: string } {
  if (validate(input)) return { args: input };
  return { refusal: ajv.errorsText(validate.errors, { dataVar: 'arguments' }) };
}

/** Free TCP ports on 127.0.0.1, all held at once while they are picked, so they differ. */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((server) => (server.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}
