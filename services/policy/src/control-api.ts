import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { RUN_PROOF_HEADER, RunKey, runPublicKey, verifyRunRequest } from '@gatehouse/events';
import { toMcpTool, toOpenAiFunction } from '@gatehouse/contracts';
import type { Catalog } from '@gatehouse/contracts';
import { isActive } from '@gatehouse/state';
import type { AccessTokenVerifier } from '@gatehouse/identity';
import type { DelegationWriter, PersonRef, Registrar, Run, RunRegistry, RunTokens } from '@gatehouse/state';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import { registerOperatorRoutes } from './operator-api.js';
import type { OperatorApiOptions } from './operator-api.js';
import { grantRun } from '@gatehouse/governance';
import type { Roles } from '@gatehouse/governance';
import type { Health } from '@gatehouse/runtime';
import { CONTROL_TOKEN_CLIENT } from './trusted-callers.js';
import type { TrustedCallers } from './trusted-callers.js';

export interface ControlApiOptions {
  readonly runs: RunRegistry;
  /** Issues the MCP bearer tokens of runs (`mcp_token: true` on registration, or POST /runs/:id/mcp-tokens). */
  readonly runTokens: RunTokens;
  readonly catalog: Catalog;
  readonly roles: Roles;
  /** Who may register and manage runs: the IdP's clients with the runs scope (and the local control token, where set). Agents never are. */
  readonly callers: TrustedCallers;
  /** The issuer people are named by; a run's `on_behalf_of` must name one of its people (absent: any). */
  readonly personIssuer?: string;
  /**
   * Token exchange: a person's access token handed to a run (`subject_token`), checked for issuer,
   * audience (the executors' client), expiry and signature, and kept for the executors, sealed to
   * their keys. Absent: refused.
   */
  readonly delegation?: { readonly verifier: AccessTokenVerifier; readonly store: DelegationWriter };
  readonly maxRunTtlMs: number;
  readonly logger: Logger;
  /** Answers /healthz and /readyz. */
  readonly health: Health;
  /** Served at GET /metrics when given. */
  readonly metrics?: GatehouseMetrics;
  /** The operator routes (GET /operations/:key, POST /operations/:key/resolve): people with the operator role, not trusted code. */
  readonly operations?: Omit<OperatorApiOptions, 'catalog' | 'runs' | 'refused'>;
}

interface CreateRunBody {
  run_id?: string;
  tenant: string;
  principal: string;
  role: string;
  capabilities?: string[];
  environment: string;
  ttl_ms: number;
  mcp_token?: boolean;
  on_behalf_of?: { issuer: string; subject: string; name?: string };
  subject_token?: string;
}

const subjectTokenProperty = { type: 'string', minLength: 1, maxLength: 16384 } as const;

const createRunSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'principal', 'role', 'environment', 'ttl_ms'],
  properties: {
    run_id: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' },
    tenant: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' },
    principal: { type: 'string', minLength: 1, maxLength: 200 },
    role: { type: 'string', minLength: 1, maxLength: 64 },
    capabilities: { type: 'array', maxItems: 200, uniqueItems: true, items: { type: 'string', maxLength: 128 } },
    environment: { type: 'string', enum: ['sandbox', 'staging', 'production'] },
    ttl_ms: { type: 'integer', minimum: 1000 },
    mcp_token: { type: 'boolean' },
    on_behalf_of: {
      type: 'object',
      additionalProperties: false,
      required: ['issuer', 'subject'],
      properties: {
        issuer: { type: 'string', minLength: 1, maxLength: 500 },
        subject: { type: 'string', minLength: 1, maxLength: 255 },
        name: { type: 'string', minLength: 1, maxLength: 200 },
      },
    },
    subject_token: subjectTokenProperty,
  },
} as const;

const subjectTokenSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['subject_token'],
  properties: { subject_token: subjectTokenProperty },
} as const;

type Refusal = { readonly status: 422 | 503; readonly code: string; readonly message: string };
type SubjectCheck =
  { readonly ok: true; readonly person: PersonRef; readonly expiresAt: number } | { readonly ok: false; readonly refusal: Refusal };

/**
 * A person's access token handed over for token exchange: the IdP's, for the executors' client,
 * live and signed. Its issuer and subject are the person the run acts for.
 */
async function checkSubjectToken(delegation: ControlApiOptions['delegation'], token: string, name: string | null): Promise<SubjectCheck> {
  if (delegation === undefined) {
    return {
      ok: false,
      refusal: {
        status: 422,
        code: 'SUBJECT_TOKEN_REFUSED',
        message: 'this deployment exchanges no tokens (GATEHOUSE_EXCHANGE_CLIENT_ID is unset): register the run without subject_token',
      },
    };
  }
  const checked = await delegation.verifier.verify(token);
  if (!checked.ok) {
    if (checked.reason === 'issuer_unreachable')
      return {
        ok: false,
        refusal: { status: 503, code: 'ISSUER_UNAVAILABLE', message: "the identity provider's keys could not be fetched; try again" },
      };
    return {
      ok: false,
      refusal: {
        status: 422,
        code: 'SUBJECT_TOKEN_REFUSED',
        message: `subject_token is not a live token of ${delegation.verifier.issuer} for ${delegation.verifier.audience} (${checked.reason})`,
      },
    };
  }
  const claimed = typeof checked.claims['name'] === 'string' ? checked.claims['name'] : null;
  return {
    ok: true,
    person: { issuer: checked.claims.iss, subject: checked.claims.sub, name: name ?? claimed },
    expiresAt: checked.claims.exp * 1000,
  };
}

const samePerson = (a: PersonRef | null | undefined, b: PersonRef): boolean =>
  a !== null && a !== undefined && a.issuer === b.issuer && a.subject === b.subject;

/** Routes anyone may call: health, metrics, and a run's tool definitions (the run id is the runtime's handle). */
const PUBLIC = { public: true } as const;
/** A route an agent runtime reaches with its run's proof (`gatehouse-run-proof`) instead of trusted code's token. */
const RUN_PROVED = { runProved: true } as const;
/** How far a run-proved request's time may be from this service's clock, either way. */
const RUN_PROOF_WINDOW_MS = 5 * 60 * 1000;

/**
 * The trusted side: registering runs (who, which role, which tools, until when), listing and
 * stopping them, and serving a run's tool definitions to its runtime.
 */
export function buildControlApi(options: ControlApiOptions): FastifyInstance {
  const loggerInstance: FastifyBaseLogger = options.logger.child({ api: 'control' });
  const app = Fastify({ loggerInstance });

  const registrarOf = authenticateCallers(app, options);
  registerOpsRoutes(app, options);
  registerRunRegistration(app, options, registrarOf);
  registerRunTokenRoutes(app, options, registrarOf);
  registerRunRoutes(app, options, registrarOf);
  registerToolRoutes(app, options, registrarOf);
  if (options.operations !== undefined) {
    registerOperatorRoutes(app, {
      ...options.operations,
      catalog: options.catalog,
      runs: options.runs,
      refused: (code) => options.metrics?.identityRefused('control', code),
    });
  }

  return app;
}

/** The trusted caller of a request, as the hook let it in. */
type RegistrarOf = (request: FastifyRequest) => Registrar;

/** Lets only trusted callers reach every route but the public ones; to who each request's caller is. */
function authenticateCallers(app: FastifyInstance, options: ControlApiOptions): RegistrarOf {
  // Every route but the public ones is for trusted code, checked once here, before validation (an
  // anonymous caller learns nothing from a 400). The operator routes are for people: they check
  // their caller themselves, as early, and trusted code is no operator.
  const callerOf = new WeakMap<FastifyRequest, Registrar>();
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.config as { public?: boolean; operator?: boolean; runProved?: boolean };
    if (route.public === true || route.operator === true) return;
    // Such a route checks the proof itself; without one, it is trusted code's like any other.
    if (route.runProved === true && request.headers[RUN_PROOF_HEADER] !== undefined) return;
    const caller = await options.callers.authenticate(request.headers.authorization);
    if (!caller.ok) {
      options.metrics?.identityRefused('control', caller.code);
      if (caller.challenge !== undefined) void reply.header('www-authenticate', caller.challenge);
      return reply.code(caller.status).send({ error: { code: caller.code, message: caller.message } });
    }
    callerOf.set(request, caller.registrar);
  });
  return (request: FastifyRequest): Registrar => {
    const registrar = callerOf.get(request);
    if (registrar === undefined) throw new Error('a trusted route was reached without a caller');
    return registrar;
  };
}

/** /healthz, /readyz and, when given, /metrics: public. */
function registerOpsRoutes(app: FastifyInstance, options: ControlApiOptions): void {
  app.get('/healthz', { config: PUBLIC }, (_request, reply) => {
    const live = options.health.live();
    return reply.code(live.statusCode).send(live.body);
  });
  app.get('/readyz', { config: PUBLIC }, async (_request, reply) => {
    const ready = await options.health.ready();
    return reply.code(ready.statusCode).send(ready.body);
  });
  const metrics = options.metrics;
  if (metrics !== undefined)
    app.get('/metrics', { config: PUBLIC }, async (_request, reply) => reply.type(metrics.contentType).send(await metrics.scrape()));
}

/** POST /runs: a run registered for a tenant, a role and its tools, on behalf of a person when named. */
function registerRunRegistration(app: FastifyInstance, options: ControlApiOptions, registrarOf: RegistrarOf): void {
  app.post<{ Body: CreateRunBody }>('/runs', { schema: { body: createRunSchema } }, async (request, reply) => {
    const body = request.body;
    const grant = grantRun(
      options.roles,
      options.catalog,
      { role: body.role, ttlMs: body.ttl_ms, capabilities: body.capabilities },
      options.maxRunTtlMs,
    );
    if (!grant.ok) {
      const { code, message, permitted } = grant;
      return reply.code(422).send({ error: { code, message, ...(permitted === undefined ? {} : { permitted }) } });
    }
    let person: PersonRef | null =
      body.on_behalf_of === undefined
        ? null
        : { issuer: body.on_behalf_of.issuer, subject: body.on_behalf_of.subject, name: body.on_behalf_of.name ?? null };
    let subject: Extract<SubjectCheck, { ok: true }> | undefined;
    if (body.subject_token !== undefined) {
      // The person's own token names them: on_behalf_of, if given too, must be the same person.
      const checked = await checkSubjectToken(options.delegation, body.subject_token, person?.name ?? null);
      if (!checked.ok)
        return reply.code(checked.refusal.status).send({ error: { code: checked.refusal.code, message: checked.refusal.message } });
      if (person !== null && !samePerson(person, checked.person)) {
        return reply
          .code(422)
          .send({ error: { code: 'SUBJECT_MISMATCH', message: 'subject_token names another person than on_behalf_of' } });
      }
      subject = checked;
      person = checked.person;
    }
    if (person !== null && options.personIssuer !== undefined && person.issuer !== options.personIssuer) {
      // A person of another issuer could never be matched against an approver: four eyes would silently not hold.
      return reply
        .code(422)
        .send({ error: { code: 'UNKNOWN_ISSUER', message: `on_behalf_of must name a person of ${options.personIssuer}` } });
    }
    const now = Date.now();
    const registrar = registrarOf(request);
    // The run's own key: its commands prove the run with it. Only the public half is kept.
    const runKey = RunKey.generate();
    const run: Run = {
      run_id: body.run_id ?? `run_${randomUUID()}`,
      tenant: body.tenant,
      principal: body.principal,
      on_behalf_of: person,
      registered_by: registrar,
      role: body.role,
      capabilities: [...grant.capabilities],
      environment: body.environment,
      created_at: now,
      expires_at: now + body.ttl_ms,
      stopped_at: null,
      proof_key: runKey.publicKey(),
    };
    if (!(await options.runs.create(run))) {
      return reply.code(409).send({ error: { code: 'RUN_EXISTS', message: `run ${run.run_id} already exists` } });
    }
    if (subject !== undefined) await options.delegation?.store.saveSubjectToken(run.run_id, body.subject_token ?? '', subject.expiresAt);
    request.log.info(
      {
        run_id: run.run_id,
        tenant: run.tenant,
        role: run.role,
        tools: run.capabilities.length,
        registered_by: registrar.client_id,
        on_behalf_of: person?.subject ?? null,
        subject_token: subject !== undefined,
      },
      'run registered',
    );
    // The run key and the token are shown once, in this answer; neither is kept.
    const created = { ...run, run_key: runKey.text() };
    if (body.mcp_token === true) return reply.code(201).send({ ...created, mcp_token: (await options.runTokens.issue(run)).token });
    return reply.code(201).send(created);
  });
}

/**
 * Whether `caller` manages `run`: the client of the IdP that registered it (same issuer and client),
 * or the local-development control token, which stands for the whole deployment. Another client's
 * runs, of any tenant, do not exist for a caller (404): it can neither list, read, stop nor mint
 * tokens for them.
 */
function manages(caller: Registrar, run: Run): boolean {
  if (caller.client_id === CONTROL_TOKEN_CLIENT && caller.issuer === null) return true;
  const by = run.registered_by;
  return by !== null && by !== undefined && by.issuer === caller.issuer && by.client_id === caller.client_id;
}

/** More MCP tokens for a run, and the fresh token of the person it acts for. */
function registerRunTokenRoutes(app: FastifyInstance, options: ControlApiOptions, registrarOf: RegistrarOf): void {
  // Another token for an active run: for a second MCP client, or to replace one that leaked (stop the
  // run to revoke every token it has).
  app.post<{ Params: { id: string } }>('/runs/:id/mcp-tokens', async (request, reply) => {
    const run = await options.runs.get(request.params.id);
    if (run === undefined || !isActive(run) || !manages(registrarOf(request), run))
      return reply.code(404).send({ error: { code: 'RUN_NOT_FOUND', message: 'no such active run' } });
    const issued = await options.runTokens.issue(run);
    request.log.info({ run_id: run.run_id }, 'MCP token issued');
    return reply.code(201).send({ run_id: run.run_id, mcp_token: issued.token, expires_at: issued.expires_at });
  });

  // The person's fresh token for an active run of theirs: the orchestrator hands one over before the
  // last one lapses, so the executors can keep exchanging it (a refresh token they hold outlives it
  // too, while the person's session at the IdP lasts).
  app.put<{ Params: { id: string }; Body: { subject_token: string } }>(
    '/runs/:id/subject-token',
    { schema: { body: subjectTokenSchema } },
    async (request, reply) => {
      const run = await options.runs.get(request.params.id);
      if (run === undefined || !isActive(run) || !manages(registrarOf(request), run))
        return reply.code(404).send({ error: { code: 'RUN_NOT_FOUND', message: 'no such active run' } });
      const checked = await checkSubjectToken(options.delegation, request.body.subject_token, null);
      if (!checked.ok)
        return reply.code(checked.refusal.status).send({ error: { code: checked.refusal.code, message: checked.refusal.message } });
      if (!samePerson(run.on_behalf_of, checked.person)) {
        return reply
          .code(422)
          .send({ error: { code: 'SUBJECT_MISMATCH', message: 'subject_token names another person than the run acts for' } });
      }
      await options.delegation?.store.saveSubjectToken(run.run_id, request.body.subject_token, checked.expiresAt);
      request.log.info({ run_id: run.run_id }, "person's token handed over");
      return { run_id: run.run_id, expires_at: checked.expiresAt };
    },
  );
}

/** Listing, reading and stopping runs: each caller the runs it manages. */
function registerRunRoutes(app: FastifyInstance, options: ControlApiOptions, registrarOf: RegistrarOf): void {
  app.get<{ Querystring: { tenant?: string } }>('/runs', async (request, reply) => {
    const tenant = request.query.tenant;
    if (tenant === undefined) return reply.code(400).send({ error: { code: 'INVALID_REQUEST', message: 'tenant is required' } });
    const caller = registrarOf(request);
    return { runs: (await options.runs.list(tenant)).filter((run) => manages(caller, run)) };
  });

  app.get<{ Params: { id: string } }>('/runs/:id', async (request, reply) => {
    const run = await options.runs.get(request.params.id);
    if (run === undefined || !manages(registrarOf(request), run))
      return reply.code(404).send({ error: { code: 'RUN_NOT_FOUND', message: 'no such run' } });
    return { ...run, active: isActive(run) };
  });

  app.post<{ Params: { id: string } }>('/runs/:id/stop', async (request, reply) => {
    const run = await options.runs.get(request.params.id);
    if (run === undefined || !manages(registrarOf(request), run))
      return reply.code(404).send({ error: { code: 'RUN_NOT_FOUND', message: 'no such run' } });
    const outcome = await options.runs.stop(request.params.id);
    if (outcome === 'not_found') return reply.code(404).send({ error: { code: 'RUN_NOT_FOUND', message: 'no such run' } });
    return { run_id: request.params.id, outcome };
  });
}

/** A run's tool definitions, for its runtime. */
function registerToolRoutes(app: FastifyInstance, options: ControlApiOptions, registrarOf: RegistrarOf): void {
  // A run's tools, for its agent runtime (the request proves the run with its key, `gatehouse-run-proof`)
  // or for the trusted code that manages it. A proof that fails is answered as a run that does not
  // exist, so the route tells no one which run ids are live.
  app.get<{ Params: { id: string }; Querystring: { format?: string } }>(
    '/runs/:id/tools',
    { config: RUN_PROVED },
    async (request, reply) => {
      const run = await options.runs.get(request.params.id);
      const proof = request.headers[RUN_PROOF_HEADER];
      const allowed =
        run !== undefined &&
        isActive(run) &&
        (typeof proof === 'string'
          ? verifyRunRequest(run.run_id, proof, runPublicKey(run.proof_key), Date.now(), RUN_PROOF_WINDOW_MS)
          : manages(registrarOf(request), run));
      if (!allowed || run === undefined) return reply.code(404).send({ error: { code: 'RUN_NOT_FOUND', message: 'no such active run' } });
      const tools = run.capabilities.map((address) => options.catalog.get(address)).filter((t) => t !== undefined);
      const format = request.query.format ?? 'mcp';
      if (format === 'mcp') return { tools: tools.map(toMcpTool) };
      if (format === 'openai') return { tools: tools.map(toOpenAiFunction) };
      return reply.code(400).send({ error: { code: 'INVALID_REQUEST', message: 'format is mcp or openai' } });
    },
  );
}
