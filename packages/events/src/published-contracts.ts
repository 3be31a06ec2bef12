import { contractSha256, contractStatement, statementDifferences } from '@gatehouse/contracts';
import type { ToolContract } from '@gatehouse/contracts';
import { EventsError } from './events-error.js';
import { topicNames } from './topics.js';
import type { Topics } from './topics.js';

/**
 * A published tool version cannot change. The first service to serve `tool@version` publishes its
 * contract in the schema registry, as version 1 of the subject `<prefix>gatehouse.contract.<address>`;
 * every service after it that serves that version must hold the very same contract, or it does not
 * start (CONTRACT_CHANGED, naming the tool and where the two differ).
 *
 * Why the registry: it is where this deployment's wire contracts already live, every service reaches
 * it at start-up, and it keeps what it is given for as long as the deployment's Kafka does (its
 * storage is the deployment's, not a cache that a Redis restart without persistence would empty,
 * after which a second contract could be published under the same version). Why version 1: two
 * services that start at once with two contracts may both register theirs; the registry orders the
 * registrations, the first is version 1 for everyone, and the other refuses to start.
 *
 * What is stored is a JSON Schema document (the registry's JSON type), which carries the contract's
 * statement and its sha256 under `x-gatehouse-contract` and `x-gatehouse-contract-sha256`.
 */

/**
 * The registry subject a tool version's contract is published under: beside the deployment's topics,
 * with their prefix (`<prefix>gatehouse.commands` → `<prefix>gatehouse.contract.<address>`).
 */
export function contractSubject(topics: Topics, address: string): string {
  const base = topicNames().commands;
  const prefix = topics.commands.endsWith(base) ? topics.commands.slice(0, -base.length) : `${topics.commands}.`;
  return `${prefix}gatehouse.contract.${address}`;
}

export interface PublishedContract {
  readonly address: string;
  readonly sha256: string;
  /** This service published it (no service had before). */
  readonly publishedNow: boolean;
}

interface Stored {
  readonly sha256: string;
  readonly statement: unknown;
}

const REQUEST_TIMEOUT_MS = 10_000;
const ACCEPT = 'application/vnd.schemaregistry.v1+json, application/json';

/** The document a contract is published as. */
function documentOf(contract: ToolContract): string {
  return JSON.stringify({
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: `the contract of ${contract.address}`,
    'x-gatehouse-contract-sha256': contractSha256(contract),
    'x-gatehouse-contract': contractStatement(contract),
  });
}

async function request(url: string, init: RequestInit, what: string): Promise<Response> {
  try {
    return await fetch(url, { ...init, headers: { accept: ACCEPT, ...init.headers }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (cause) {
    throw new EventsError('REGISTRY_UNAVAILABLE', `the schema registry could not be asked for ${what}`, { cause });
  }
}

/** Version 1 of the subject: the contract first published under it, or undefined when none is. */
async function firstPublished(registryUrl: string, subject: string): Promise<Stored | undefined> {
  const response = await request(`${registryUrl}/subjects/${encodeURIComponent(subject)}/versions/1`, {}, subject);
  if (response.status === 404) {
    await response.arrayBuffer();
    return undefined;
  }
  if (!response.ok) {
    await response.arrayBuffer();
    throw new EventsError('REGISTRY_UNAVAILABLE', `the schema registry answered HTTP ${response.status} for ${subject}`);
  }
  const body = (await response.json()) as { schema?: unknown };
  let document: Record<string, unknown> | undefined;
  try {
    document = typeof body.schema === 'string' ? (JSON.parse(body.schema) as Record<string, unknown>) : undefined;
  } catch {
    document = undefined;
  }
  const sha256 = document?.['x-gatehouse-contract-sha256'];
  if (typeof sha256 !== 'string') {
    throw new EventsError('SCHEMA_REFUSED', `${subject} in the schema registry holds no published contract`);
  }
  return { sha256, statement: document?.['x-gatehouse-contract'] };
}

/** Registers the contract under its subject; a registry that refuses (another contract got there first) is read back. */
async function publish(registryUrl: string, subject: string, contract: ToolContract): Promise<void> {
  const response = await request(
    `${registryUrl}/subjects/${encodeURIComponent(subject)}/versions`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schemaType: 'JSON', schema: documentOf(contract) }),
    },
    subject,
  );
  await response.arrayBuffer();
  // 409: the subject's rules refused a second document. Whoever published first, version 1 says what it is.
  if (response.ok || response.status === 409) return;
  if (response.status >= 400 && response.status < 500) {
    throw new EventsError('SCHEMA_REFUSED', `the schema registry refused to publish ${subject} (HTTP ${response.status})`);
  }
  throw new EventsError('REGISTRY_UNAVAILABLE', `the schema registry answered HTTP ${response.status} publishing ${subject}`);
}

/**
 * Publishes each contract not yet published under its version and checks every one against what
 * was published first. Throws CONTRACT_CHANGED for the first that differs, naming the tool and
 * where; REGISTRY_UNAVAILABLE when the registry cannot be asked (the service cannot start without
 * it anyway: its event schemas live there too).
 */
export async function publishContracts(
  options: { readonly registryUrl: string; readonly topics: Topics },
  contracts: readonly ToolContract[],
): Promise<PublishedContract[]> {
  // A few at a time: a catalog of dozens of tools is checked in a few round trips, not dozens.
  const out: PublishedContract[] = [];
  for (let start = 0; start < contracts.length; start += CHECKED_AT_ONCE) {
    out.push(...(await Promise.all(contracts.slice(start, start + CHECKED_AT_ONCE).map((c) => publishOne(options, c)))));
  }
  return out;
}

const CHECKED_AT_ONCE = 8;

async function publishOne(
  options: { readonly registryUrl: string; readonly topics: Topics },
  contract: ToolContract,
): Promise<PublishedContract> {
  const subject = contractSubject(options.topics, contract.address);
  let stored = await firstPublished(options.registryUrl, subject);
  let publishedNow = false;
  if (stored === undefined) {
    await publish(options.registryUrl, subject, contract);
    stored = await firstPublished(options.registryUrl, subject);
    if (stored === undefined) throw new EventsError('REGISTRY_UNAVAILABLE', `the schema registry lost ${subject} as it was published`);
    publishedNow = true;
  }
  const sha256 = contractSha256(contract);
  if (stored.sha256 !== sha256) {
    const where = statementDifferences(stored.statement, contractStatement(contract));
    throw new EventsError(
      'CONTRACT_CHANGED',
      `${contract.address}: this service's contract differs from the one published under that version ` +
        `(published sha256 ${stored.sha256}, held ${sha256}; differs at ${where.length > 0 ? where.join(', ') : 'a field this service cannot name'}). ` +
        'A changed contract needs a new version; nothing was started.',
    );
  }
  return { address: contract.address, sha256, publishedNow };
}
