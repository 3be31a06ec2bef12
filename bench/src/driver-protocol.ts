import { Worker } from 'node:worker_threads';
import type { DriverSetup, LoadReport, LoadSpec } from './driver.js';
import type { McpDriverSetup } from './mcp-driver.js';

export type DriverRequest =
  | { readonly id: number; readonly op: 'start'; readonly arm: string; readonly setup: DriverSetup | McpDriverSetup }
  | { readonly id: number; readonly op: 'run'; readonly arm: string; readonly spec: LoadSpec }
  | { readonly id: number; readonly op: 'stop'; readonly arm: string };

export type DriverResponse = { readonly id: number; readonly ok: true; readonly value: unknown } | { readonly id: number; readonly ok: false; readonly error: string };

type Body<R> = R extends DriverRequest ? Omit<R, 'id'> : never;

/** The main thread's handle on the driver thread: one driver per arm, addressed by the arm's name. */
export class DriverThread {
  private readonly worker = new Worker(new URL('./driver-worker.js', import.meta.url));
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private next = 0;

  constructor() {
    this.worker.on('message', (response: DriverResponse) => {
      const waiter = this.waiting.get(response.id);
      this.waiting.delete(response.id);
      if (response.ok) waiter?.resolve(response.value);
      else waiter?.reject(new Error(`driver thread: ${response.error}`));
    });
    this.worker.on('error', (error) => {
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    });
  }

  async start(arm: string, setup: DriverSetup | McpDriverSetup): Promise<void> {
    await this.ask({ op: 'start', arm, setup });
  }

  async run(arm: string, spec: LoadSpec): Promise<LoadReport> {
    return (await this.ask({ op: 'run', arm, spec })) as LoadReport;
  }

  async stop(arm: string): Promise<void> {
    await this.ask({ op: 'stop', arm });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private ask(body: Body<DriverRequest>): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...body, id });
    });
  }
}
