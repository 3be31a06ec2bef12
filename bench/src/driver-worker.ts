// The load driver's thread: it generates load in parallel with the services under test, which run
// on the main thread, so the driver's own work does not queue behind theirs on one event loop.
import { parentPort } from 'node:worker_threads';
import { Driver } from './driver.js';
import type { LoadReport, LoadSpec } from './driver.js';
import type { DriverRequest, DriverResponse } from './driver-protocol.js';
import { McpDriver } from './mcp-driver.js';

const port = parentPort;
if (port === null) throw new Error('driver-worker runs as a worker thread');
/** A load generator: over Kafka (every arm but m) or through the MCP front door (arm m). */
interface LoadGenerator {
  run(spec: LoadSpec): Promise<LoadReport>;
  stop(): Promise<void>;
}
const drivers = new Map<string, LoadGenerator>();

async function serve(request: DriverRequest): Promise<unknown> {
  switch (request.op) {
    case 'start':
      drivers.set(request.arm, request.setup.kind === 'mcp' ? await McpDriver.start(request.setup) : await Driver.start(request.setup));
      return null;
    case 'run': {
      const driver = drivers.get(request.arm);
      if (driver === undefined) throw new Error(`no driver for arm ${request.arm}`);
      return driver.run(request.spec);
    }
    case 'stop':
      await drivers.get(request.arm)?.stop();
      drivers.delete(request.arm);
      return null;
  }
}

port.on('message', (request: DriverRequest) => {
  serve(request).then(
    (value) => port.postMessage({ id: request.id, ok: true, value } satisfies DriverResponse),
    (error: unknown) => port.postMessage({ id: request.id, ok: false, error: error instanceof Error ? error.stack ?? error.message : String(error) } satisfies DriverResponse),
  );
});
