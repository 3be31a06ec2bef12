import { Child } from './child-process.js';
import type { KafkaDriverSetup, LoadReport, LoadSpec } from './driver.js';
import type { HttpDriverSetup } from './http-driver.js';
import type { McpDriverSetup } from './mcp-driver.js';

export type DriverSetup = KafkaDriverSetup | McpDriverSetup | HttpDriverSetup;

/** The main process's handle on one driver process (`driver-process.ts`), the load generator of one setup. */
export class DriverProcess {
  private constructor(readonly child: Child) {}

  /** Forks the driver process and starts its driver; `env` is added to the process's environment. */
  static async start(name: string, setup: DriverSetup, env: Readonly<Record<string, string | undefined>> = {}): Promise<DriverProcess> {
    const child = new Child(name, './driver-process.js', env);
    try {
      await child.ask('start', setup);
    } catch (error) {
      await child.stop();
      throw error;
    }
    return new DriverProcess(child);
  }

  async run(spec: LoadSpec): Promise<LoadReport> {
    return (await this.child.ask('run', spec)) as LoadReport;
  }

  stop(): Promise<void> {
    return this.child.stop();
  }
}
