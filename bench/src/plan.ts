import { benchNoop, benchSleep, benchWrite } from './bench-catalog.js';
import type { LoadSpec } from './driver.js';

/** The systems under test; each has its own topics (and Redis prefix) and its own driver. */
export const Setup = {
  relayRaw: 'relay-raw',
  relayAvro: 'relay-avro',
  relayPlatformatic: 'relay-platformatic',
  gatehouse: 'gatehouse',
  /** (c)'s setup with OTLP export on in the driver, policy and executor processes. */
  gatehouseTraced: 'gatehouse-traced',
  gatehouseOpen: 'gatehouse-open',
  gatehouseMcp: 'gatehouse-mcp',
  /** (m)'s setup, called by clients of protocol revision 2026-07-28. */
  gatehouseMcpEnvelope: 'gatehouse-mcp-2026',
  scale1: 'scale-1',
  scale2: 'scale-2',
  scale3: 'scale-3',
  /** The anchors: what a platform team would run instead, doing the same governed call. */
  restate: 'anchor-restate',
  dbos: 'anchor-dbos',
} as const;
export type Setup = (typeof Setup)[keyof typeof Setup];

/** The arms of the issue, by letter; a2 is (a′), arm (a) with another Kafka client; m2 is (m′), (m) on protocol 2026-07-28. */
const Arm = {
  a: 'a',
  a2: 'a2',
  b: 'b',
  c: 'c',
  t: 't',
  m: 'm',
  m2: 'm2',
  d: 'd',
  e: 'e',
  open: 'open',
  s: 's',
  restate: 'restate',
  dbos: 'dbos',
} as const;
type Arm = (typeof Arm)[keyof typeof Arm];

const ARM_TITLES: Readonly<Record<Arm, string>> = {
  a: '(a) raw kafkajs relay',
  a2: '(a′) raw relay, platformatic',
  b: '(b) relay + Avro/registry',
  c: '(c) Gatehouse read',
  t: '(t) read, tracing on',
  m: '(m) read via MCP front door',
  m2: '(m′) read via MCP, 2026-07-28',
  d: '(d) Gatehouse write',
  e: '(e) executors, 10 ms I/O',
  open: 'open loop, read',
  s: '(s) one call at a time',
  restate: 'Restate',
  dbos: 'DBOS',
};

/** One measured configuration: an arm on its setup with one tool, size and load shape. */
export interface Variant {
  readonly id: string;
  readonly arm: Arm;
  readonly setup: Setup;
  readonly label: string;
  readonly argumentBytes: number;
  readonly executors?: number;
  readonly rate?: number;
  readonly spec: LoadSpec;
}

export interface BenchSettings {
  readonly quick: boolean;
  /** Measured repetitions of every variant (after one discarded warm-up round). */
  readonly repetitions: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  /** The discarded load that opens a setup's turn after it was paused for another's. */
  readonly resumeWarmupMs: number;
  readonly drainMs: number;
  readonly settleMs: number;
  readonly inFlight: number;
  /** Calls in flight in arm (e) (`--scale-in-flight`). */
  readonly scaleInFlight: number;
  readonly sizes: readonly number[];
  readonly rates: readonly number[];
  /** Runs (each its own tenant) the driver spreads calls over. */
  readonly runs: number;
  /**
   * Records one executor process works on at once in arm (e) (`--scale-concurrency`): two, so one
   * executor is bound by the handler's 10 ms and its round trips, well below what the policy service
   * routes, and adding executors can show.
   */
  readonly scaleConcurrency: number;
  /** Arms to run (all when empty). */
  readonly only: readonly Arm[];
}

/** The positive integer after `flag` in argv, else `fallback`. */
function intOption(argv: readonly string[], flag: string, fallback: number): number {
  const at = argv.indexOf(flag);
  if (at === -1) return fallback;
  const value = Number(argv[at + 1]);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${flag} takes a positive integer`);
  return value;
}

export function settingsOf(argv: readonly string[]): BenchSettings {
  const quick = argv.includes('--quick');
  const onlyAt = argv.indexOf('--only');
  const only = onlyAt === -1 ? [] : (argv[onlyAt + 1] ?? '').split(',').filter((a): a is Arm => Object.hasOwn(Arm, a));
  return {
    quick,
    repetitions: quick ? 2 : 5,
    durationMs: quick ? 1_500 : 3_000,
    warmupMs: quick ? 1_500 : 2_000,
    resumeWarmupMs: 1_000,
    drainMs: 5_000,
    settleMs: 15_000,
    inFlight: 256,
    scaleInFlight: intOption(argv, '--scale-in-flight', 256),
    sizes: quick ? [256] : [256, 2_048],
    rates: quick ? [1_000] : [500, 1_000, 2_000],
    runs: 128,
    scaleConcurrency: intOption(argv, '--scale-concurrency', 2),
    only,
  };
}

const sizeLabel = (bytes: number) => (bytes >= 1024 ? `${bytes / 1024} KB` : `${bytes} B`);

/** Every variant, in the order one round runs them: arms interleaved, a round per repetition. */
export function variantsOf(settings: BenchSettings): Variant[] {
  const closed = (tool: string, argumentBytes: number, inFlight = settings.inFlight): LoadSpec => ({
    tool,
    argumentBytes,
    durationMs: settings.durationMs,
    drainMs: settings.drainMs,
    settleMs: settings.settleMs,
    mode: { kind: 'closed', inFlight },
  });
  const variants: Variant[] = [];
  for (const size of settings.sizes) {
    const s = sizeLabel(size);
    variants.push(
      {
        id: `a-${size}`,
        arm: 'a',
        setup: Setup.relayRaw,
        label: `${ARM_TITLES.a}, ${s}`,
        argumentBytes: size,
        spec: closed(benchNoop.address, size),
      },
      // (a)'s relay with @platformatic/kafka in both hops, the driver unchanged.
      {
        id: `a2-${size}`,
        arm: 'a2',
        setup: Setup.relayPlatformatic,
        label: `${ARM_TITLES.a2}, ${s}`,
        argumentBytes: size,
        spec: closed(benchNoop.address, size),
      },
      {
        id: `b-${size}`,
        arm: 'b',
        setup: Setup.relayAvro,
        label: `${ARM_TITLES.b}, ${s}`,
        argumentBytes: size,
        spec: closed(benchNoop.address, size),
      },
      {
        id: `c-${size}`,
        arm: 'c',
        setup: Setup.gatehouse,
        label: `${ARM_TITLES.c}, ${s}`,
        argumentBytes: size,
        spec: closed(benchNoop.address, size),
      },
      // (c) with tracing on, right after (c) so drift hits both alike; at the smallest size only (its target is a ratio to (c)).
      ...(size === settings.sizes[0]
        ? [
            {
              id: `t-${size}`,
              arm: 't' as const,
              setup: Setup.gatehouseTraced,
              label: `${ARM_TITLES.t}, ${s}`,
              argumentBytes: size,
              spec: closed(benchNoop.address, size),
            },
          ]
        : []),
      // (c)'s read, called by MCP clients through the front door on a Gatehouse of its own.
      {
        id: `m-${size}`,
        arm: 'm',
        setup: Setup.gatehouseMcp,
        label: `${ARM_TITLES.m}, ${s}`,
        argumentBytes: size,
        spec: closed(benchNoop.address, size),
      },
      // The same through clients of the current revision (the SDK 2.x client, pinned to 2026-07-28).
      {
        id: `m2-${size}`,
        arm: 'm2',
        setup: Setup.gatehouseMcpEnvelope,
        label: `${ARM_TITLES.m2}, ${s}`,
        argumentBytes: size,
        spec: closed(benchNoop.address, size),
      },
      {
        id: `d-${size}`,
        arm: 'd',
        setup: Setup.gatehouse,
        label: `${ARM_TITLES.d}, ${s}`,
        argumentBytes: size,
        spec: closed(benchWrite.address, size),
      },
    );
  }
  const scaleSetups = [Setup.scale1, Setup.scale2, Setup.scale3] as const;
  scaleSetups.forEach((setup, i) => {
    variants.push({
      id: `e-${i + 1}`,
      arm: 'e',
      setup,
      label: `${ARM_TITLES.e}, ${i + 1} process${i === 0 ? '' : 'es'}`,
      argumentBytes: 256,
      executors: i + 1,
      spec: closed(benchSleep.address, 256, settings.scaleInFlight),
    });
  });
  // What one agent waits for a single call on an idle system: one call in flight, through the
  // client (c's and d's setup) and through MCP (m's), a read and a write the policy table allows.
  const single = [
    { id: 's-read', setup: Setup.gatehouse, tool: benchNoop.address, what: 'read, client' },
    { id: 's-write', setup: Setup.gatehouse, tool: benchWrite.address, what: 'allowed write, client' },
    { id: 's-mcp-read', setup: Setup.gatehouseMcp, tool: benchNoop.address, what: 'read, MCP' },
    { id: 's-mcp-write', setup: Setup.gatehouseMcp, tool: benchWrite.address, what: 'allowed write, MCP' },
  ] as const;
  for (const { id, setup, tool, what } of single) {
    variants.push({ id, arm: 's', setup, label: `${ARM_TITLES.s}: ${what}`, argumentBytes: 256, spec: closed(tool, 256, 1) });
  }
  for (const rate of settings.rates) {
    variants.push({
      id: `open-${rate}`,
      arm: 'open',
      setup: Setup.gatehouseOpen,
      label: `${ARM_TITLES.open}, ${rate}/s`,
      argumentBytes: 256,
      rate,
      spec: {
        tool: benchNoop.address,
        argumentBytes: 256,
        durationMs: settings.durationMs,
        drainMs: settings.drainMs,
        settleMs: settings.settleMs,
        mode: { kind: 'open', rate },
      },
    });
  }
  variants.push(...anchorVariants(settings.sizes[0] ?? 256, (tool, bytes) => closed(tool, bytes)));
  return settings.only.length === 0 ? variants : variants.filter((v) => settings.only.includes(v.arm));
}

/**
 * The anchors, at (c)'s and (d)'s concurrency and smallest payload: the read validates its
 * arguments against the bench tools' schema under an idempotency key, the write also runs one
 * durable step. Their figures stand beside (c) and (d) in the same run.
 */
function anchorVariants(size: number, closed: (tool: string, argumentBytes: number) => LoadSpec): Variant[] {
  const anchors = [
    { arm: 'restate', setup: Setup.restate },
    { arm: 'dbos', setup: Setup.dbos },
  ] as const;
  return anchors.flatMap(({ arm, setup }) =>
    (
      [
        ['read', benchNoop.address],
        ['write', benchWrite.address],
      ] as const
    ).map(([what, tool]) => ({
      id: `${arm}-${what}-${size}`,
      arm,
      setup,
      label: `${ARM_TITLES[arm]} ${what}, ${sizeLabel(size)}`,
      argumentBytes: size,
      spec: closed(tool, size),
    })),
  );
}
