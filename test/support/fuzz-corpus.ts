import type { Catalog, ToolContract } from '@gatehouse/contracts';
import type { EventSerde, ToolCommand } from '@gatehouse/events';
import { writeWireFormat } from '@gatehouse/events';
import { invalidCases, minimalValidCase } from '@gatehouse/testkit';
import type { JsonSchema } from '@gatehouse/testkit';
import type { IHeaders } from 'kafkajs';
import { avroBytes, avroLong, HOSTILE_STRINGS, HOSTILE_TOOL_NAMES } from './fuzz-prng.js';
import type { Prng } from './fuzz-prng.js';

/** What each kind of envelope attacks; the weights sum to 100. */
export const FUZZ_WEIGHTS = {
  randomBytes: 8,
  emptyOrShort: 2,
  wrongMagic: 3,
  unknownSchemaId: 3,
  foreignSchemaId: 3,
  truncatedAvro: 6,
  trailingBytes: 3,
  craftedAvro: 6,
  forgedRun: 12,
  wrongTenant: 6,
  hostileTool: 10,
  readOnlyWrite: 4,
  hostileArguments: 34,
} as const;
export type FuzzCategory = keyof typeof FUZZ_WEIGHTS;

interface FuzzRun {
  readonly run_id: string;
  readonly tenant: string;
}

export interface FuzzContext {
  readonly serde: EventSerde;
  readonly catalog: Catalog;
  /** The id gatehouse.commands is written with, and ids of other topics' schemas. */
  readonly commandsSchemaId: number;
  readonly foreignSchemaIds: readonly number[];
  /** A live run that may call every support tool, and a live read-only one. */
  readonly agentRun: FuzzRun;
  readonly readOnlyRun: FuzzRun;
  /** The tools the agent run may call. */
  readonly tools: readonly ToolContract[];
}

export interface FuzzEnvelope {
  readonly key: string;
  readonly value: Buffer | null;
  readonly headers?: IHeaders;
  readonly category: FuzzCategory;
}

/** Ids no registry hands out soon; few, so the serde's negative cache keeps registry lookups rare. */
const UNKNOWN_IDS = Array.from({ length: 8 }, (_, i) => 2_000_000_000 + i);
// avsc writes longs within ±2^52 only; beyond that only the crafted bodies go.
const SAFE_LONGS = [0, -1, 1, 2 ** 52, -(2 ** 52), Date.now()];

/** Picks a category by weight. */
function category(rng: Prng): FuzzCategory {
  let roll = rng.int(100);
  for (const [name, weight] of Object.entries(FUZZ_WEIGHTS) as [FuzzCategory, number][]) {
    if (roll < weight) return name;
    roll -= weight;
  }
  return 'hostileArguments';
}

function hostile(rng: Prng): string {
  // Rare and bounded: the corpus stays a few tens of MB.
  if (rng.chance(0.002)) return rng.pick(HOSTILE_STRINGS).repeat(1 + rng.int(3_000));
  return rng.chance(0.5) ? rng.pick(HOSTILE_STRINGS) : `${rng.pick(HOSTILE_STRINGS)}${rng.pick(HOSTILE_STRINGS)}`;
}

function nested(rng: Prng): string {
  const depth = rng.pick([64, 512, 4_096, 30_000]);
  return rng.chance(0.5) ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** JSON-ish texts that are malformed, or well-formed but never valid arguments of any tool. */
function malformedJson(rng: Prng, valid: string): string {
  return rng.pick([
    () => valid.slice(0, rng.int(valid.length)),
    () => `\ufeff${valid}`,
    () => `${valid.slice(0, -1)},}`,
    () => valid.replace(/"/g, "'"),
    () => `/* c */${valid}`,
    () => `${valid}\u0000`,
    () => `${valid}${valid}`,
    () => '{"customer_id": NaN}',
    () => '{"page_size": 1e309, "customer_id": "C-1"}',
    () => '{"customer_id": "C-18\\ud800"}',
    () => '{"customer_id": "C-1842", "customer_id": "C-\\u0000"}',
    () => '{"__proto__": {"customer_id": "C-1842"}}',
    () => '{"constructor": {"prototype": {"polluted": true}}}',
    () => JSON.stringify(hostile(rng)),
    () => rng.pick(['null', 'true', '0', '-0', '[]', '""', '1e400', '-']),
    () => nested(rng),
    () => (rng.chance(0.1) ? JSON.stringify({ blob: 'x'.repeat(65 * 1024 + rng.int(300_000)) }) : nested(rng)),
  ])();
}

/** Per tool: its minimal valid arguments and one-mutation invalid ones (testkit), kept only if the catalog refuses them. */
function argumentBook(ctx: FuzzContext): Map<ToolContract, { valid: string; invalid: string[] }> {
  const book = new Map<ToolContract, { valid: string; invalid: string[] }>();
  for (const tool of ctx.tools) {
    const schema = tool.input as JsonSchema;
    const invalid = invalidCases(schema)
      .filter((c) => !ctx.catalog.validateInput(tool, c.value).ok)
      .map((c) => JSON.stringify(c.value) ?? 'null');
    book.set(tool, { valid: JSON.stringify(minimalValidCase(schema)), invalid });
  }
  return book;
}

/** Arguments for `tool` that its schema refuses, whatever hostile content they carry. */
function refusedArguments(rng: Prng, tool: ToolContract, entry: { valid: string; invalid: string[] }, ctx: FuzzContext): string {
  let text: string;
  const roll = rng.int(4);
  if (roll === 0 && entry.invalid.length > 0) text = rng.pick(entry.invalid);
  else if (roll === 1) {
    const doc = JSON.parse(entry.valid) as Record<string, unknown>;
    const key = rng.pick([...HOSTILE_STRINGS, '__proto__', 'constructor']);
    text = JSON.stringify({ ...doc, [key]: rng.chance(0.5) ? hostile(rng) : { [hostile(rng)]: [hostile(rng)] } });
  } else if (roll === 2) {
    const doc = JSON.parse(entry.valid) as Record<string, unknown>;
    const field = rng.pick(Object.keys(doc).length > 0 ? Object.keys(doc) : ['customer_id']);
    text = JSON.stringify({ ...doc, [field]: rng.chance(0.7) ? hostile(rng) : rng.pick([null, -1, 1.5, true, [], {}, 2 ** 53 + 2]) });
  } else text = malformedJson(rng, entry.valid);
  // Well-formed and accepted would execute: make it refused by a field no closed schema knows.
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    return text;
  }
  if (ctx.catalog.validateInput(tool, parsed).ok) text = JSON.stringify({ ...(parsed as object), zz_fuzz_unknown: hostile(rng) });
  return text;
}

function headersOf(rng: Prng): IHeaders | undefined {
  if (!rng.chance(0.1)) return undefined;
  return rng.pick<IHeaders>([
    { traceparent: hostile(rng) },
    { traceparent: rng.bytes(rng.int(64)), tracestate: rng.bytes(rng.int(512)) },
    { [hostile(rng) || 'empty']: hostile(rng) },
    { 'gatehouse-dlq-reason': 'FORGED', 'gatehouse-dlq-origin-topic': 'elsewhere' },
  ]);
}

/** The Avro body of a command, field by field, with any field's bytes replaceable. */
function craftedBody(rng: Prng, index: number): Buffer {
  const text = (s: string) => avroBytes(Buffer.from(s, 'utf8'));
  const badUtf8 = () =>
    avroBytes(
      Buffer.concat([
        Buffer.from(`fz-${index}:`),
        rng.pick([Buffer.from([0xc0, 0x80]), Buffer.from([0xff, 0xfe]), Buffer.from([0xed, 0xa0, 0x80]), rng.bytes(8)]),
      ]),
    );
  const fields = [
    avroLong(1n),
    text(`fz-${index}:`),
    text(`run_${index}`),
    text('acme'),
    text('get_customer.v1'),
    text('{}'),
    avroLong(BigInt(Date.now())),
    avroLong(0n),
  ];
  const at = rng.int(fields.length);
  fields[at] = rng.pick([
    () => avroLong(BigInt(-1 - rng.int(1_000))),
    () => avroLong(2n ** 40n + BigInt(rng.int(1_000))),
    () => avroLong(2n ** 60n),
    () => avroLong(-(2n ** 62n)),
    () => avroLong(BigInt(2 + rng.int(10))),
    () => (at === 0 || at >= 6 ? avroLong(BigInt(2 ** 31 + rng.int(1_000))) : badUtf8()),
    () => (at === 0 || at >= 6 ? avroLong(1n) : badUtf8()),
  ])();
  return Buffer.concat(fields);
}

/** Builds the corpus generator for one Gatehouse; each envelope is keyed `fz-<index>`. */
export function fuzzCorpus(ctx: FuzzContext): (rng: Prng, index: number) => FuzzEnvelope {
  const book = argumentBook(ctx);
  const getCustomer = ctx.tools.find((t) => t.address === 'get_customer.v1');
  if (getCustomer === undefined) throw new Error('get_customer.v1 is not among the tools');
  const validGet = book.get(getCustomer)?.valid ?? '{}';
  const writeTools = ctx.tools.filter((t) => t.effect === 'write');

  return (rng, index) => {
    const kind = category(rng);
    const commandId = `fz-${index}:${rng.chance(0.2) ? hostile(rng).slice(0, 200) : ''}`;
    const base: ToolCommand = {
      schema_version: rng.chance(0.9) ? 1 : rng.pick([0, -1, 2 ** 31 - 1, -(2 ** 31)]),
      command_id: commandId,
      run_id: ctx.agentRun.run_id,
      tenant: ctx.agentRun.tenant,
      tool: 'get_customer.v1',
      arguments: validGet,
      sent_at: rng.chance(0.8) ? Date.now() : rng.pick(SAFE_LONGS),
      deadline_at: rng.chance(0.7) ? null : rng.pick(SAFE_LONGS),
    };
    const encode = (command: ToolCommand): Buffer => ctx.serde.encode('commands', command);
    const envelope = (value: Buffer | null): FuzzEnvelope => {
      const headers = headersOf(rng);
      return headers === undefined ? { key: `fz-${index}`, value, category: kind } : { key: `fz-${index}`, value, headers, category: kind };
    };
    switch (kind) {
      case 'randomBytes':
        return envelope(rng.chance(0.2) ? Buffer.concat([Buffer.from([0]), rng.bytes(4 + rng.int(300))]) : rng.bytes(1 + rng.int(300)));
      case 'emptyOrShort':
        return envelope(rng.pick([null, Buffer.alloc(0), Buffer.from([0]), Buffer.from([0, 0, 0, 0])]));
      case 'wrongMagic': {
        const good = encode(base);
        good[0] = 1 + rng.int(255);
        return envelope(good);
      }
      case 'unknownSchemaId':
        return envelope(writeWireFormat(rng.pick([...UNKNOWN_IDS, -1, 0]), encode(base).subarray(5)));
      case 'foreignSchemaId':
        return envelope(writeWireFormat(rng.pick(ctx.foreignSchemaIds), encode(base).subarray(5)));
      case 'truncatedAvro': {
        const good = encode({
          ...base,
          run_id: hostile(rng),
          arguments: refusedArguments(rng, getCustomer, book.get(getCustomer) ?? { valid: '{}', invalid: [] }, ctx),
        });
        return envelope(good.subarray(0, 5 + rng.int(good.length - 5)));
      }
      case 'trailingBytes':
        return envelope(Buffer.concat([encode({ ...base, run_id: `forged-${index}` }), rng.bytes(1 + rng.int(16))]));
      case 'craftedAvro':
        return envelope(writeWireFormat(ctx.commandsSchemaId, craftedBody(rng, index)));
      case 'forgedRun':
        return envelope(
          encode({
            ...base,
            run_id: rng.pick([
              () => hostile(rng),
              () => `${ctx.agentRun.run_id}${hostile(rng) || ' '}`,
              () => `run_${rng.bytes(16).toString('hex')}`,
              () => `{${ctx.agentRun.run_id}}`,
            ])(),
            tool: rng.chance(0.5) ? base.tool : rng.pick(ctx.tools).address,
          }),
        );
      case 'wrongTenant':
        return envelope(encode({ ...base, tenant: rng.pick(['globex', 'ACME', 'acme ', 'acme\u0000', hostile(rng)]) }));
      case 'hostileTool':
        return envelope(encode({ ...base, tool: rng.chance(0.8) ? rng.pick(HOSTILE_TOOL_NAMES) : hostile(rng) }));
      case 'readOnlyWrite': {
        const tool = rng.pick(writeTools);
        return envelope(
          encode({
            ...base,
            run_id: ctx.readOnlyRun.run_id,
            tenant: ctx.readOnlyRun.tenant,
            tool: tool.address,
            arguments: book.get(tool)?.valid ?? '{}',
          }),
        );
      }
      case 'hostileArguments': {
        const tool = rng.pick(ctx.tools);
        return envelope(
          encode({
            ...base,
            tool: tool.address,
            arguments: refusedArguments(rng, tool, book.get(tool) ?? { valid: '{}', invalid: [] }, ctx),
          }),
        );
      }
    }
  };
}
