// An executor as its own OS process, hosting the bench tools: the executor's own entry point
// (executorMain, which services/executor/src/main.ts runs with the reference tools), configured by
// the executor's environment variables. No ops endpoint (nothing scrapes it; several run on one
// host), and a 5 s drain, inside the fleet's 10 s before SIGKILL.
import { executorMain } from '@gatehouse/executor';
import { benchCatalog } from './bench-catalog.js';

await executorMain(benchCatalog, { ops: false, drainTimeoutMs: 5_000 });
