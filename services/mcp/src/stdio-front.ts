import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { JSONRPCMessage, MessageExtraInfo, Transport } from '@modelcontextprotocol/server';
import { GatehouseError } from '@gatehouse/contracts';
import { RunKey } from '@gatehouse/events';
import type { Run, RunTokens } from '@gatehouse/state';
import { createHandshakeRunServer } from './handshake-server.js';
import { createEnvelopeRunServer } from './envelope-server.js';
import type { FrontDoor } from './front-door.js';

/** The stdio front door's token or run key cannot serve: it does not start. */
export class StdioTokenError extends GatehouseError<'CONFIG_INVALID'> {
  constructor(message: string) {
    super('CONFIG_INVALID', message);
  }
}

/**
 * The key the stdio front door proves its run's commands with: the run's own (`run_key`), which
 * must be the key of the run the token names. Throws StdioTokenError otherwise.
 */
export function requireRunKey(run: Run, text: string): RunKey {
  let key: RunKey;
  try {
    key = RunKey.parse(text);
  } catch (error) {
    throw new StdioTokenError(`GATEHOUSE_RUN_KEY cannot be used: ${(error as Error).message}`);
  }
  if (key.publicKey() !== run.proof_key)
    throw new StdioTokenError(`GATEHOUSE_RUN_KEY is not the key of run ${run.run_id}, which GATEHOUSE_MCP_TOKEN names`);
  return key;
}

/** The run the token names; throws StdioTokenError unless that run is still active. */
export async function requireLiveToken(runTokens: RunTokens, token: string): Promise<Run> {
  const check = await runTokens.check(token);
  if (check.ok) return check.run;
  throw new StdioTokenError(
    check.reason === 'run_inactive'
      ? 'GATEHOUSE_MCP_TOKEN names a run that has expired or was stopped'
      : 'GATEHOUSE_MCP_TOKEN is not a valid run token',
  );
}

/**
 * stdio, with every request checked against the run as it is now: a stopped run's request gets a
 * JSON-RPC error and reaches no server. Messages are handed on in the order they came.
 */
class CheckedStdio implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private order = Promise.resolve();

  constructor(
    private readonly inner: StdioServerTransport,
    private readonly live: () => Promise<boolean>,
  ) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message) => {
      this.order = this.order.then(() => this.pass(message)).catch(() => undefined);
    };
  }

  private async pass(message: JSONRPCMessage): Promise<void> {
    if ('id' in message && 'method' in message && !(await this.live())) {
      await this.inner.send({
        jsonrpc: '2.0',
        id: message.id,
        error: { code: -32001, message: 'Unauthorized: the run has expired or was stopped' },
      });
      return;
    }
    this.onmessage?.(message);
  }

  start = (): Promise<void> => this.inner.start();
  send = (message: JSONRPCMessage): Promise<void> => this.inner.send(message);
  close = (): Promise<void> => this.inner.close();
}

/**
 * One run on stdin and stdout, for a desktop client that starts the front door as a subprocess, on
 * whichever revision the client opens with. The token was checked at start (`requireLiveToken`,
 * which gave `run`) and is checked again on every request, so stopping the run ends what it may do.
 */
export function startStdioFront(run: Run, token: string, runTokens: RunTokens, door: FrontDoor): { stop: () => Promise<void> } {
  const transport = new CheckedStdio(new StdioServerTransport(), async () => (await runTokens.check(token)).ok);
  const handle = serveStdio(
    (ctx) =>
      ctx.era === 'modern' ? createEnvelopeRunServer(run, door, { traceparentHeader: undefined }) : createHandshakeRunServer(run, door),
    { transport, onerror: (error) => door.logger.debug({ err: error }, 'MCP stdio message refused or failed') },
  );
  // The client closing our stdin is how a desktop client ends the session: stop as on SIGTERM.
  process.stdin.once('end', () => process.kill(process.pid, 'SIGTERM'));
  return { stop: () => handle.close() };
}
