import { Catalog, defineTool, implement } from '@gatehouse/contracts';
import type { ToolImplementation } from '@gatehouse/contracts';
import { PolicyTable } from '@gatehouse/policy';
import type { Roles } from '@gatehouse/policy';

/** The one role of the bench: it holds every bench tool. */
export const BENCH_ROLE = 'bench-agent';

/** The approval rule the bench write declares; the bench policy table allows it outright. */
const BENCH_WRITE_RULE = 'bench-write';

/** The arguments every bench tool takes: a correlation number and a padding string sized by the bench. */
export const PAYLOAD_INPUT = {
  type: 'object',
  additionalProperties: false,
  required: ['seq', 'payload'],
  properties: {
    seq: { type: 'integer', minimum: 0 },
    payload: { type: 'string', maxLength: 8_192 },
  },
} as const;

const ACK_OUTPUT = {
  type: 'object',
  additionalProperties: false,
  required: ['seq', 'ok'],
  properties: { seq: { type: 'integer', minimum: 0 }, ok: { type: 'boolean' } },
} as const;

/** A read that does nothing: what Gatehouse itself costs per call. */
export const benchNoop = defineTool({
  name: 'bench_noop',
  version: 1,
  description: 'Benchmark only: answers at once with a tiny acknowledgement.',
  input: PAYLOAD_INPUT,
  output: ACK_OUTPUT,
  effect: 'read',
  retry: 'never',
  timeoutMs: 5_000,
  cancel: 'none',
  maxResultBytes: 1_024,
} as const);

/** A read that waits 10 ms without using the CPU: an I/O-bound tool, for executor scaling. */
export const benchSleep = defineTool({
  name: 'bench_sleep',
  version: 1,
  description: 'Benchmark only: waits 10 ms (no CPU), then answers with a tiny acknowledgement.',
  input: PAYLOAD_INPUT,
  output: ACK_OUTPUT,
  effect: 'read',
  retry: 'never',
  timeoutMs: 5_000,
  cancel: 'none',
  maxResultBytes: 1_024,
} as const);

/**
 * A write that does nothing but answer: the cost of the write path (implicit proposal, policy
 * grant, idempotency claim, approval and proposal consumption, tenant and run slots, resource lock).
 */
export const benchWrite = defineTool({
  name: 'bench_write',
  version: 1,
  description: 'Benchmark only: a write with no effect that answers with a tiny acknowledgement.',
  input: PAYLOAD_INPUT,
  output: ACK_OUTPUT,
  effect: 'write',
  retry: 'idempotent',
  approval: BENCH_WRITE_RULE,
  timeoutMs: 5_000,
  cancel: 'none',
  maxResultBytes: 1_024,
} as const);

/** How long bench_sleep waits. */
const SLEEP_MS = 10;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// Each handler asks for its call's credential, as one that calls a system of record does: the
// figures include minting a call assertion per call.
const BENCH_AUDIENCE = { audience: 'bench-system-of-record' } as const;
/** The request each handler's assertion is minted for (nothing is sent to it). */
const BENCH_REQUEST = { method: 'POST', url: 'http://bench-system-of-record.invalid/calls' } as const;

const benchImplementations: readonly ToolImplementation[] = [
  implement(benchNoop, {
    credential: BENCH_AUDIENCE,
    run: async (args, context) => {
      await context.credential(BENCH_REQUEST);
      return { seq: args.seq, ok: true };
    },
  }),
  implement(benchSleep, {
    credential: BENCH_AUDIENCE,
    run: async (args, context) => {
      await context.credential(BENCH_REQUEST);
      await sleep(SLEEP_MS);
      return { seq: args.seq, ok: true };
    },
  }),
  implement(benchWrite, {
    credential: BENCH_AUDIENCE,
    run: async (args, context) => {
      await context.credential(BENCH_REQUEST);
      return { seq: args.seq, ok: true };
    },
    // A resource per call: the bench measures the write path, not contention on one record.
    resourceOf: (args) => `bench:${args.seq}`,
    status: () => Promise.resolve({ state: 'unknown' }),
  }),
];

export interface BenchCatalog {
  readonly catalog: Catalog;
  readonly implementations: readonly ToolImplementation[];
  readonly roles: Roles;
  readonly table: PolicyTable;
}

/** The bench catalog, its role and a policy table that allows the bench write without a person. */
export function benchCatalog(): BenchCatalog {
  const catalog = Catalog.load(benchImplementations.map((i) => i.contract));
  const roles: Roles = {
    [BENCH_ROLE]: {
      description: 'Benchmark agent: every bench tool.',
      readOnly: false,
      tools: catalog.tools().map((t) => t.address),
    },
  };
  const table = PolicyTable.parse(
    {
      rules: [
        {
          id: 'bench-write-allow',
          description: 'Benchmark only: the bench write runs without approval (pre-granted by policy).',
          match: { effect: 'write', approvalRules: [BENCH_WRITE_RULE] },
          decision: { kind: 'allow' },
        },
      ],
    },
    catalog.tools(),
  );
  return { catalog, implementations: benchImplementations, roles, table };
}
