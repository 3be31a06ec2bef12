import avsc from 'avsc';
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { EventsError } from './events-error.js';
import { loadEventSchemas } from './schema-files.js';
import type { EventSchemas } from './schema-files.js';
import { subjectOf, TOPIC_ROLES } from './topics.js';
import type { EventByRole, TopicRole, Topics } from './topics.js';
import { readWireHeader, writeWireFormat } from './wire-format.js';

/** Why a record could not be decoded; each one sends the record to the DLQ. */
export const DecodeFailure = {
  NOT_WIRE_FORMAT: 'NOT_WIRE_FORMAT',
  UNKNOWN_SCHEMA_ID: 'UNKNOWN_SCHEMA_ID',
  SCHEMA_MISMATCH: 'SCHEMA_MISMATCH',
  AVRO_DECODE_FAILED: 'AVRO_DECODE_FAILED',
} as const;
export type DecodeFailure = (typeof DecodeFailure)[keyof typeof DecodeFailure];

export type Decoded<T> =
  | { readonly ok: true; readonly value: T; readonly schemaId: number }
  | { readonly ok: false; readonly reason: DecodeFailure; readonly message: string };

/** How a writer schema id reads into a topic's reader schema, cached per (role, id). */
type Reading =
  | { readonly ok: true; readonly resolver: avsc.Resolver | undefined }
  | { readonly ok: false; readonly reason: DecodeFailure; readonly message: string };

const UNKNOWN_ID_TTL_MS = 30_000;
const UNKNOWN_ID_CACHE_MAX = 10_000;
// Resolvers for other schema ids of a topic (earlier and later versions): a fleet has a handful. Whoever
// can register schemas and write a topic can mint any number, so the cache starts over past this.
const READING_CACHE_MAX = 1_000;
const MESSAGE_MAX = 300;

export interface EventSerdeOptions {
  readonly registryUrl: string;
  readonly topics: Topics;
  /** Reader and writer schemas by topic role; defaults to the sources in `schemas/`. */
  readonly schemas?: EventSchemas;
}

/**
 * Avro serde for Gatehouse topics through a Confluent-compatible registry. Schemas are compiled and
 * registered once at start-up; encoding is synchronous and allocation-light; decoding classifies
 * every bad record by a stable reason instead of throwing, so a consumer can route it to the DLQ.
 */
export class EventSerde {
  readonly topics: Topics;
  private readonly registryUrl: string;
  private readonly registry: SchemaRegistry;
  private readonly schemas: EventSchemas;
  private readonly types: Readonly<Record<TopicRole, avsc.Type>>;
  private readonly ids = new Map<TopicRole, number>();
  private readonly readings = new Map<string, Promise<Reading>>();
  private readonly unknownIds = new Map<number, number>();

  constructor(options: EventSerdeOptions) {
    this.registryUrl = options.registryUrl;
    this.topics = options.topics;
    this.registry = new SchemaRegistry({ host: options.registryUrl });
    this.schemas = options.schemas ?? loadEventSchemas();
    const types = {} as Record<TopicRole, avsc.Type>;
    for (const role of TOPIC_ROLES) types[role] = avsc.Type.forSchema(this.schemas[role] as avsc.Schema);
    this.types = types;
  }

  /**
   * Sets BACKWARD compatibility on each topic's subject and registers its schema. Each topic's turn
   * is bounded and tried again when the registry does not answer: registering is idempotent (the
   * same schema gets the same id), and a request the registry never answered must not hold a
   * service's start-up until its deadline.
   */
  async registerAll(): Promise<Readonly<Record<TopicRole, number>>> {
    const out = {} as Record<TopicRole, number>;
    for (const role of TOPIC_ROLES) {
      for (let attempt = 1; ; attempt += 1) {
        try {
          out[role] = await withinMs(
            this.register(role),
            REGISTRY_REQUEST_TIMEOUT_MS,
            `the registry did not answer for ${this.topics[role]}`,
          );
          break;
        } catch (error) {
          const refused = error instanceof EventsError && error.code === 'SCHEMA_REFUSED';
          if (refused || attempt >= REGISTER_ATTEMPTS) throw error;
          await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        }
      }
    }
    return out;
  }

  /** Registers one topic's schema under TopicNameStrategy with BACKWARD compatibility. */
  async register(role: TopicRole): Promise<number> {
    const subject = subjectOf(this.topics[role]);
    await this.setCompatibility(subject);
    try {
      const { id } = await this.registry.register(
        { type: SchemaType.AVRO, schema: JSON.stringify(this.schemas[role]) },
        { subject, compatibility: COMPATIBILITY.BACKWARD },
      );
      this.ids.set(role, id);
      return id;
    } catch (cause) {
      const status = statusOf(cause);
      if (status !== undefined && status >= 400 && status < 500) {
        throw new EventsError('SCHEMA_REFUSED', `registry refused the schema of ${subject} (HTTP ${status})`, { cause });
      }
      throw new EventsError('REGISTRY_UNAVAILABLE', `could not register the schema of ${subject}`, { cause });
    }
  }

  /** The id this process writes a topic's events with; registerAll() must have run. */
  schemaId(role: TopicRole): number {
    const id = this.ids.get(role);
    if (id === undefined) {
      throw new EventsError('SCHEMA_REFUSED', `schema of ${this.topics[role]} is not registered; call registerAll() at start-up`);
    }
    return id;
  }

  /** Encodes an event in the wire format. Throws ENCODE_FAILED naming the bad paths, never values. */
  encode<R extends TopicRole>(role: R, event: EventByRole[R]): Buffer {
    const id = this.schemaId(role);
    const type = this.types[role];
    let body: Buffer;
    try {
      body = type.toBuffer(event);
    } catch (cause) {
      const paths: string[] = [];
      type.isValid(event, { errorHook: (path) => paths.push(path.join('.') || '(root)') });
      throw new EventsError(
        'ENCODE_FAILED',
        `${this.topics[role]} event does not match its schema at ${paths.join(', ') || '(unknown path)'}`,
        { cause },
      );
    }
    return writeWireFormat(id, body);
  }

  /**
   * Decodes a record value of a topic. Bad records come back as `{ok: false, reason}`; only an
   * unreachable registry throws (REGISTRY_UNAVAILABLE), since retrying later can succeed.
   */
  async decode<R extends TopicRole>(role: R, value: Buffer | null): Promise<Decoded<EventByRole[R]>> {
    const header = readWireHeader(value);
    if (!header.ok) return { ok: false, reason: DecodeFailure.NOT_WIRE_FORMAT, message: header.message };
    const reading = await this.readingOf(role, header.schemaId);
    if (!reading.ok) return reading;
    try {
      const decoded = this.types[role].fromBuffer(header.body, reading.resolver, false) as EventByRole[R];
      return { ok: true, value: decoded, schemaId: header.schemaId };
    } catch (cause) {
      return { ok: false, reason: DecodeFailure.AVRO_DECODE_FAILED, message: clip(`Avro body does not decode: ${messageOf(cause)}`) };
    }
  }

  private readingOf(role: TopicRole, schemaId: number): Promise<Reading> | Reading {
    if (this.ids.get(role) === schemaId) return { ok: true, resolver: undefined };
    const until = this.unknownIds.get(schemaId);
    if (until !== undefined && until > Date.now()) {
      return { ok: false, reason: DecodeFailure.UNKNOWN_SCHEMA_ID, message: `schema id ${schemaId} is not in the registry` };
    }
    const key = `${role}:${schemaId}`;
    let reading = this.readings.get(key);
    if (reading === undefined) {
      if (this.readings.size >= READING_CACHE_MAX) this.readings.clear();
      reading = this.resolve(role, schemaId);
      this.readings.set(key, reading);
      // A registry outage must not be cached: forget the attempt so the next record asks again.
      reading.catch(() => this.readings.delete(key));
    }
    return reading;
  }

  private async resolve(role: TopicRole, schemaId: number): Promise<Reading> {
    const writerSchema = await this.fetchSchema(schemaId);
    if (writerSchema === undefined) {
      this.rememberUnknown(schemaId);
      this.readings.delete(`${role}:${schemaId}`);
      return { ok: false, reason: DecodeFailure.UNKNOWN_SCHEMA_ID, message: `schema id ${schemaId} is not in the registry` };
    }
    try {
      const writer = avsc.Type.forSchema(writerSchema);
      return { ok: true, resolver: this.types[role].createResolver(writer) };
    } catch (cause) {
      return {
        ok: false,
        reason: DecodeFailure.SCHEMA_MISMATCH,
        message: clip(`schema id ${schemaId} cannot be read as ${this.topics[role]}'s event: ${messageOf(cause)}`),
      };
    }
  }

  private async fetchSchema(schemaId: number): Promise<avsc.Schema | undefined> {
    let response: Response;
    try {
      response = await fetch(`${this.registryUrl}/schemas/ids/${schemaId}`, {
        headers: { accept: 'application/vnd.schemaregistry.v1+json, application/json' },
      });
    } catch (cause) {
      throw new EventsError('REGISTRY_UNAVAILABLE', `schema registry unreachable at ${this.registryUrl}`, { cause });
    }
    if (response.status === 404) return undefined;
    if (!response.ok) {
      throw new EventsError('REGISTRY_UNAVAILABLE', `schema registry answered HTTP ${response.status} for schema id ${schemaId}`);
    }
    const body = (await response.json()) as { schema?: unknown; schemaType?: unknown };
    if (typeof body.schema !== 'string' || (body.schemaType !== undefined && body.schemaType !== 'AVRO')) return undefined;
    return JSON.parse(body.schema) as avsc.Schema;
  }

  private rememberUnknown(schemaId: number): void {
    if (this.unknownIds.size >= UNKNOWN_ID_CACHE_MAX) this.unknownIds.clear();
    this.unknownIds.set(schemaId, Date.now() + UNKNOWN_ID_TTL_MS);
  }

  private async setCompatibility(subject: string): Promise<void> {
    const url = `${this.registryUrl}/config/${encodeURIComponent(subject)}`;
    // Services starting side by side set the same rule at once; the registry answers the losers
    // 409 (the rule was just created). Whoever wrote it, BACKWARD in place is what start-up needs.
    for (let attempt = 1; ; attempt += 1) {
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'PUT',
          headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
          body: JSON.stringify({ compatibility: 'BACKWARD' }),
          signal: AbortSignal.timeout(REGISTRY_REQUEST_TIMEOUT_MS),
        });
        // Read to the end, so the connection goes back to the pool for the next request.
        await response.arrayBuffer();
      } catch (cause) {
        throw new EventsError('REGISTRY_UNAVAILABLE', `schema registry unreachable at ${this.registryUrl}`, { cause });
      }
      if (response.ok) return;
      if (response.status === 409 && (await this.compatibilityOf(url)) === 'BACKWARD') return;
      if (response.status !== 409 || attempt >= 5) {
        throw new EventsError('REGISTRY_UNAVAILABLE', `could not set BACKWARD compatibility on ${subject} (HTTP ${response.status})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }

  /** The compatibility level set on a subject, or undefined when none is (or it cannot be read). */
  private async compatibilityOf(url: string): Promise<string | undefined> {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(REGISTRY_REQUEST_TIMEOUT_MS) });
      if (!response.ok) {
        await response.arrayBuffer();
        return undefined;
      }
      const body = (await response.json()) as { compatibilityLevel?: unknown; compatibility?: unknown };
      const level = body.compatibilityLevel ?? body.compatibility;
      return typeof level === 'string' ? level : undefined;
    } catch {
      return undefined;
    }
  }
}

/** How long one request to the registry (or one topic's registration) may take at start-up. */
const REGISTRY_REQUEST_TIMEOUT_MS = 10_000;
/** Tries of one topic's registration before start-up fails. */
const REGISTER_ATTEMPTS = 4;

/** `work`, or REGISTRY_UNAVAILABLE once `ms` have passed without its answer (a late answer is dropped). */
function withinMs<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EventsError('REGISTRY_UNAVAILABLE', message)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

function statusOf(error: unknown): number | undefined {
  if (typeof error === 'object' && error !== null && 'status' in error && typeof error.status === 'number') {
    return error.status;
  }
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function clip(text: string): string {
  return text.length > MESSAGE_MAX ? `${text.slice(0, MESSAGE_MAX)}…` : text;
}
