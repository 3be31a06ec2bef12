import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Run, RunTokens } from '@gatehouse/state';
import { createRunServer } from './run-server.js';
import type { FrontDoor } from './run-server.js';

export class StdioTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StdioTokenError';
  }
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
 * One run on stdin and stdout, for a desktop client that starts the front door as a subprocess. The
 * token was checked at start (`requireLiveToken`, which gave `run`) and is checked again on every
 * request, so stopping the run ends what it may do.
 */
export async function startStdioFront(
  run: Run,
  token: string,
  runTokens: RunTokens,
  door: FrontDoor,
): Promise<{ stop: () => Promise<void> }> {
  const server = createRunServer(run, door);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  // Every request is checked against the run as it is now (a stopped run gets a JSON-RPC error);
  // messages are handed on in the order they came.
  const serve = transport.onmessage;
  let order = Promise.resolve();
  transport.onmessage = (message: JSONRPCMessage) => {
    order = order
      .then(async () => {
        if ('id' in message && 'method' in message && !(await runTokens.check(token)).ok) {
          await transport.send({
            jsonrpc: '2.0',
            id: message.id,
            error: { code: -32001, message: 'Unauthorized: the run has expired or was stopped' },
          });
          return;
        }
        serve?.(message);
      })
      .catch(() => undefined);
  };
  // The client closing our stdin is how a desktop client ends the session: stop as on SIGTERM.
  process.stdin.once('end', () => process.kill(process.pid, 'SIGTERM'));
  return { stop: () => server.close() };
}
