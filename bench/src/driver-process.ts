// A load generator as its own OS process (one per system under test): it generates load in parallel
// with the services under test, which run in processes of their own, and measures its own CPU.
import { serveParent } from './child-process.js';
import { Driver } from './driver.js';
import type { LoadReport, LoadSpec } from './driver.js';
import type { DriverSetup } from './driver-protocol.js';
import { HttpDriver } from './http-driver.js';
import { McpDriver } from './mcp-driver.js';

/** A load generator: over Kafka, through the MCP front door (arms m, m′), or over HTTP to an anchor. */
interface LoadGenerator {
  run(spec: LoadSpec): Promise<LoadReport>;
  stop(): Promise<void>;
}
let driver: LoadGenerator | undefined;

serveParent(
  async (op, body) => {
    switch (op) {
      case 'start': {
        const setup = body as DriverSetup;
        driver =
          setup.kind === 'mcp' ? await McpDriver.start(setup) : setup.kind === 'http' ? new HttpDriver(setup) : await Driver.start(setup);
        return null;
      }
      case 'run':
        if (driver === undefined) throw new Error('the driver is not started');
        return driver.run(body as LoadSpec);
      default:
        throw new Error(`unknown request ${op}`);
    }
  },
  () => ({ redisSent: {}, redisBatches: 0 }),
  async () => {
    await driver?.stop();
  },
);
