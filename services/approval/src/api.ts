import cookie from '@fastify/cookie';
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Health } from '@gatehouse/runtime';
import { IDENTITY_REFUSALS } from '@gatehouse/identity';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import type { ApprovalDecisions, DecisionRefusal, ShownProposal } from './approval-decisions.js';
import { REASON_MAX, visibleTo } from './approval-decisions.js';
import type { ApproverAuth } from './approver-auth.js';
import { CSRF_HEADER } from './approver-auth.js';
import type { Approver } from './approvers.js';
import type { ConsoleAssets } from './console-assets.js';
import { APPROVAL_STATES } from './request-repository.js';
import type { ApprovalState, RequestRepository } from './request-repository.js';
import { detailOf, summaryOf } from './request-view.js';

export interface ApiOptions {
  readonly repository: RequestRepository;
  readonly decider: ApprovalDecisions;
  readonly auth: ApproverAuth;
  /** The cookie that carries a console session (its name depends on TLS). */
  readonly sessionCookie: () => string;
  readonly assets: ConsoleAssets;
  readonly logger: Logger;
  /** Answers /healthz and /readyz. */
  readonly health: Health;
  /** Served at GET /metrics when given. */
  readonly metrics?: GatehouseMetrics;
}

const LIST_LIMIT = 200;

const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const proposalParams = {
  type: 'object',
  required: ['proposal_id'],
  properties: { proposal_id: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tenant: { type: 'string', minLength: 1, maxLength: 63 },
    state: { type: 'string', enum: APPROVAL_STATES },
  },
} as const;

/** What the person was shown, which every decision carries: the stored request's hash and target version. */
const shownProperties = {
  arguments_sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  target_version: { type: ['integer', 'null'] },
} as const;

const approveBody = {
  type: 'object',
  additionalProperties: false,
  required: ['arguments_sha256', 'target_version'],
  properties: shownProperties,
} as const;

const rejectBody = {
  type: 'object',
  additionalProperties: false,
  required: ['arguments_sha256', 'target_version', 'reason'],
  properties: { ...shownProperties, reason: { type: 'string', maxLength: REASON_MAX * 2 } },
} as const;

const errorBody = (code: string, message: string, extra: Record<string, unknown> = {}) => ({ error: { code, message, ...extra } });

function sendDecisionRefusal(reply: FastifyReply, error: DecisionRefusal): FastifyReply {
  const extra = {
    ...(error.state === undefined ? {} : { state: error.state }),
    ...(error.signIn === undefined ? {} : { sign_in: error.signIn, max_age: error.maxAge }),
  };
  return reply.code(error.status).send(errorBody(error.code, error.message, extra));
}

/**
 * The approvers' HTTP API and console. Every /api route needs a signed-in approver: a console
 * session (with its CSRF token on every decision) or a bearer token. An approver sees only their
 * tenants' requests (another tenant's request is a 404, never a 403).
 */
export function buildApi(options: ApiOptions): FastifyInstance {
  const loggerInstance: FastifyBaseLogger = options.logger.child({ api: 'approval' });
  const app = Fastify({ loggerInstance, logController: new LogController({ disableRequestLogging: true }), bodyLimit: 16 * 1024 });
  void app.register(cookie);

  app.setErrorHandler((error: { statusCode?: number; message: string }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send(errorBody('INVALID_REQUEST', error.message));
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send(errorBody('INTERNAL', 'unexpected failure'));
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorBody('NOT_FOUND', 'no such route')));
  app.addHook('onSend', (_request, reply, payload, done) => {
    void reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer').header('cache-control', 'no-store');
    done(null, payload);
  });

  const signedIn = authenticateApiRequests(app, options);
  registerOpsRoutes(app, options);
  registerConsoleRoutes(app, options);
  registerApprovalRoutes(app, options, signedIn);
  return app;
}

/** Who made a request under /api/, as the authentication hook found them. */
interface SignedIn {
  readonly approverOf: (request: FastifyRequest) => Approver;
  /** The console session's CSRF token; undefined for a bearer caller. */
  readonly csrfOf: (request: FastifyRequest) => string | undefined;
}

/** Signs in every request under /api/ (session or bearer token), or answers it with the refusal. */
function authenticateApiRequests(app: FastifyInstance, options: ApiOptions): SignedIn {
  const { auth } = options;
  // Authentication runs before validation, so an anonymous caller learns nothing from a 400.
  const signedIn = new WeakMap<FastifyRequest, Approver>();
  const csrfOf = new WeakMap<FastifyRequest, string>();
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/api/')) return;
    const csrf = request.headers[CSRF_HEADER];
    const outcome = await auth.authenticate({
      authorization: request.headers.authorization,
      sessionId: request.cookies[options.sessionCookie()],
      csrf: typeof csrf === 'string' ? csrf : undefined,
      changes: request.method !== 'GET' && request.method !== 'HEAD',
    });
    if (!outcome.ok) {
      options.metrics?.identityRefused('approval', outcome.code);
      const status = IDENTITY_REFUSALS[outcome.code].status;
      if (outcome.challenge !== undefined) void reply.header('www-authenticate', outcome.challenge);
      return reply.code(status).send(errorBody(outcome.code, outcome.message));
    }
    signedIn.set(request, outcome.approver);
    if (outcome.session !== undefined) csrfOf.set(request, outcome.session.value.csrf);
  });
  const approverOf = (request: FastifyRequest): Approver => {
    const approver = signedIn.get(request);
    if (approver === undefined) throw new Error('route under /api/ reached without an approver');
    return approver;
  };
  return { approverOf, csrfOf: (request) => csrfOf.get(request) };
}

/** /healthz, /readyz and, when given, /metrics. */
function registerOpsRoutes(app: FastifyInstance, options: ApiOptions): void {
  app.get('/healthz', (_request, reply) => {
    const live = options.health.live();
    return reply.code(live.statusCode).send(live.body);
  });
  app.get('/readyz', async (_request, reply) => {
    const ready = await options.health.ready();
    return reply.code(ready.statusCode).send(ready.body);
  });
  const metrics = options.metrics;
  if (metrics !== undefined) app.get('/metrics', async (_request, reply) => reply.type(metrics.contentType).send(await metrics.scrape()));
}

/** The console's page and assets, and what it offers before anyone signs in. */
function registerConsoleRoutes(app: FastifyInstance, { assets, auth }: ApiOptions): void {
  app.get('/', (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-frame-options', 'DENY')
      .send(assets.html),
  );
  app.get('/console.js', (_request, reply) => reply.type('text/javascript; charset=utf-8').send(assets.script));
  app.get('/console.css', (_request, reply) => reply.type('text/css; charset=utf-8').send(assets.style));

  // Public: what the console offers before anyone signs in.
  app.get('/auth/config', () => ({ sign_in: auth.signsIn ? '/login' : null, demo_tokens: auth.demoTokens }));
}

/** /api/: who is signed in, the requests they may see, and their decisions. */
function registerApprovalRoutes(app: FastifyInstance, options: ApiOptions, { approverOf, csrfOf }: SignedIn): void {
  const { repository, decider } = options;
  app.get('/api/me', (request) => {
    const approver = approverOf(request);
    return {
      identity: approver.identity,
      issuer: approver.issuer,
      subject: approver.subject,
      name: approver.name,
      auth_time: approver.authTime,
      roles: approver.roles,
      tenants: approver.tenants,
      demo: approver.demo,
      // The console sends it back on every decision; a bearer caller has none and needs none.
      csrf_token: csrfOf(request) ?? null,
    };
  });

  app.get<{ Querystring: { tenant?: string; state?: ApprovalState } }>(
    '/api/approvals',
    { schema: { querystring: listQuery } },
    async (request, reply) => {
      const approver = approverOf(request);
      const { tenant, state = 'pending' } = request.query;
      if (tenant !== undefined && !approver.tenants.includes(tenant)) {
        return reply.code(404).send(errorBody('NOT_FOUND', 'no such tenant'));
      }
      const rows = await repository.list({ tenants: tenant === undefined ? approver.tenants : [tenant], state, limit: LIST_LIMIT });
      return { approvals: rows.map((row) => summaryOf(row, approver)) };
    },
  );

  app.get<{ Params: { proposal_id: string } }>(
    '/api/approvals/:proposal_id',
    { schema: { params: proposalParams } },
    async (request, reply) => {
      const approver = approverOf(request);
      const row = await repository.get(request.params.proposal_id);
      if (row === undefined) return reply.code(404).send(errorBody('NOT_FOUND', 'no such approval request'));
      if (!visibleTo(approver, row)) {
        options.metrics?.identityRefused('approval', 'OTHER_TENANT');
        return reply.code(404).send(errorBody('NOT_FOUND', 'no such approval request'));
      }
      return detailOf(row, approver);
    },
  );

  app.post<{ Params: { proposal_id: string }; Body: ShownProposal }>(
    '/api/approvals/:proposal_id/approve',
    { schema: { params: proposalParams, body: approveBody } },
    async (request, reply) => {
      const approver = approverOf(request);
      const { arguments_sha256, target_version } = request.body;
      const outcome = await decider.approve(approver, request.params.proposal_id, { arguments_sha256, target_version });
      if (!outcome.ok) return sendDecisionRefusal(reply, outcome.error);
      return reply.code(outcome.published ? 200 : 202).send({ ...detailOf(outcome.row, approver), published: outcome.published });
    },
  );

  app.post<{ Params: { proposal_id: string }; Body: ShownProposal & { reason: string } }>(
    '/api/approvals/:proposal_id/reject',
    { schema: { params: proposalParams, body: rejectBody } },
    async (request, reply) => {
      const approver = approverOf(request);
      const { arguments_sha256, target_version, reason } = request.body;
      const outcome = await decider.reject(approver, request.params.proposal_id, { arguments_sha256, target_version }, reason);
      if (!outcome.ok) return sendDecisionRefusal(reply, outcome.error);
      return reply.code(outcome.published ? 200 : 202).send({ ...detailOf(outcome.row, approver), published: outcome.published });
    },
  );
}
