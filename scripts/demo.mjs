// `npm run demo`: a scripted agent session against the whole system — the local stack and every
// service as its own process — printed as a transcript. Exits 0 only if every step gave the
// expected typed result.
import {
  AGENT_OWNER,
  APPROVAL,
  bold,
  checklist,
  CONTROL,
  demoEnv,
  dim,
  http,
  orchestratorToken,
  out,
  show,
  shownIn,
  signInApprover,
  signInOperator,
  waitFor,
} from './demo-kit.mjs';
import { requirePrerequisites } from './prerequisites.mjs';
import { PUBLIC_KEYS, startServices } from './services.mjs';
import { build, stackDown, stackUp } from './stack-lifecycle.mjs';

// A fresh clone has nothing compiled: check the machine, build (incremental, a fraction of a second
// when nothing changed), and only then load the workspace packages.
await requirePrerequisites();
build();
const { createClient, resultKeysFromEnv } = await import('@gatehouse/client');
const { createKafka, DeadLetters, EventPublisher, EventSerde, eventsConfigFromEnv, startEventConsumer, topicNames } =
  await import('@gatehouse/events');
const { createLogger } = await import('@gatehouse/telemetry');
const { tablesIn } = await import('@gatehouse/customers');
const { default: pg } = await import('pg');

const { session, env } = demoEnv('demo', { CUSTOMERS_FAULTS: '1', EXPORT_STEP_MS: '300' });
const CUSTOMERS = 'http://127.0.0.1:8090';
const { check, summary } = checklist();

function agentSays(tool, args) {
  out(`   agent → ${bold(tool)} ${show(args)}`);
}

function gatehouseSays(result) {
  if (result.ok) out(`   gatehouse ← ok ${dim(`(op ${result.operationId}, data not instructions)`)} ${show(result.result)}`);
  else
    out(
      `   gatehouse ← ${result.status} ${bold(result.error.code)} retryable=${result.error.retryable} ${show({ message: result.error.message, field: result.error.field, permitted: result.error.permitted, next: result.error.next, retry_after_ms: result.error.retryAfterMs })}`,
    );
}

/** Registers a run as trusted code does: with the orchestrator's client-credentials token, on behalf of the agent's owner. */
async function createRun(role, principal) {
  const token = await orchestratorToken();
  const { status, body } = await http('POST', `${CONTROL}/runs`, token, {
    tenant: 'acme',
    principal,
    role,
    environment: 'production',
    ttl_ms: 3_600_000,
    on_behalf_of: AGENT_OWNER,
  });
  if (status !== 201) throw new Error(`run registration answered ${status}: ${show(body)}`);
  return body;
}

let approverSession;

/** Approves a pending proposal in the approval API, as a person signed in at the local identity provider. */
async function approveAsSignedInApprover(proposalId) {
  if (approverSession === undefined) {
    approverSession = await signInApprover(APPROVAL);
    const { me } = approverSession;
    out(
      `   ${bold('approver')} signed in at the identity provider's login page: ${me.name} (${me.identity}), roles ${me.roles.join(', ')}`,
    );
    out(`      ${dim(`issuer ${me.issuer}, subject ${me.subject}`)}`);
  }
  const shown = await waitFor(
    async () => {
      const r = await http('GET', `${APPROVAL}/api/approvals/${proposalId}`, approverSession);
      return r.status === 200 ? r.body : undefined;
    },
    20_000,
    'the pending request in the approval service',
  );
  const change = shown.request.diff.changes[0];
  out(`   ${bold('approver')} ${approverSession.me.identity} sees: ${shown.request.effect}`);
  out(`      ${change.field}: ${change.before} → ${change.after}   role required: ${shown.request.approver_role}`);
  const approved = await http('POST', `${APPROVAL}/api/approvals/${proposalId}/approve`, approverSession, shownIn(shown));
  out(
    `   approver → approve ${dim(`HTTP ${approved.status}`)}${approved.body?.decider ? dim(`, recorded as ${approved.body.decider.subject} of ${approved.body.decider.issuer}`) : ''}`,
  );
  return approved.status === 200 && approved.body.decider?.subject === approverSession.me.subject;
}

async function main() {
  out(bold('Gatehouse demo — an agent session on the reference domain'));
  out(dim('Bringing up the local stack and the services (customers runs with test fault hooks on)…'));
  const started = stackUp();
  let services;
  let client;
  let operatorWatch;
  const cleanup = async () => {
    await client?.close().catch(() => {});
    await operatorWatch?.stop().catch(() => {});
    await services?.stop();
    stackDown(started);
  };
  try {
    services = await startServices({
      names: ['customers', 'policy', 'approval', 'executor-1'],
      env,
      say: (line) => out(dim(`   ${line}`)),
      ...(process.env.GATEHOUSE_DEMO_LOGS ? { logsDir: process.env.GATEHOUSE_DEMO_LOGS } : {}),
    });
    const config = eventsConfigFromEnv({ ...process.env, ...env });
    const topics = topicNames(config.topicPrefix);
    const logger = createLogger('demo', { level: 'silent' });
    client = await createClient({
      config,
      topics,
      controlUrl: CONTROL,
      clientId: 'demo-agent',
      logger,
      defaultTimeoutMs: 60_000,
      resultKeys: resultKeysFromEnv(PUBLIC_KEYS),
    });

    const handoffs = [];
    const kafka = createKafka(config, 'demo-operator-desk');
    const serde = new EventSerde({ registryUrl: config.registryUrl, topics });
    await serde.registerAll();
    const publisher = await EventPublisher.connect(kafka, serde);
    const watch = await startEventConsumer({
      kafka,
      serde,
      role: 'operator',
      groupId: `demo-operator-${session}`,
      fromBeginning: false,
      logger,
      deadLetters: new DeadLetters(publisher),
      handle: async (handoff) => void handoffs.push(handoff),
    });
    operatorWatch = {
      stop: async () => {
        await watch.stop();
        await publisher.disconnect();
      },
    };
    await watch.joined;

    const agent = await createRun('support-agent', 'agent:demo-support-bot');
    const readonly = await createRun('support-readonly', 'agent:demo-lookup-bot');
    const ops = await createRun('ops-admin', 'agent:demo-ops-bot');
    out(
      `\n${bold('0. Trusted code registers runs')} ${dim('(control API, with a client-credentials token from the IdP; agents cannot create or widen runs)')}`,
    );
    out(`   ${agent.run_id} role support-agent, ${agent.capabilities.length} tools; ${readonly.run_id} role support-readonly`);
    out(
      `   registered by ${agent.registered_by.client_id}, on behalf of ${agent.on_behalf_of.name} ${dim(`(${agent.on_behalf_of.subject}): they can never approve this run's writes`)}`,
    );
    check(
      'the run records the client that registered it and the person it acts for',
      agent.registered_by.client_id === 'gatehouse-orchestrator' && agent.on_behalf_of.subject === AGENT_OWNER.subject,
      show(agent),
    );
    const call = (run, tool, args, options = {}) => {
      agentSays(tool, args);
      return client.call(tool, args, { runId: run.run_id, tenant: run.tenant, runKey: run.run_key, ...options });
    };

    out(`\n${bold('1. A read')}`);
    const customer = await call(agent, 'get_customer.v1', { customer_id: 'C-1842' });
    gatehouseSays(customer);
    check(
      'get_customer returns the typed view, without internal fields',
      customer.ok && customer.result.version === 17 && !('credit_score' in customer.result),
      show(customer),
    );

    out(`\n${bold('2. A paginated list')}`);
    let cursor;
    let pages = 0;
    let orders = 0;
    let largest = 0;
    do {
      const page = await call(agent, 'list_open_orders_for_customer.v1', {
        customer_id: 'C-1842',
        page_size: 10,
        ...(cursor ? { cursor } : {}),
      });
      if (!page.ok) {
        gatehouseSays(page);
        break;
      }
      out(
        `   gatehouse ← ok ${page.result.orders.length} orders, cursor ${page.result.cursor === null ? 'null (last page)' : `${page.result.cursor.slice(0, 16)}…`}`,
      );
      pages += 1;
      orders += page.result.orders.length;
      largest = Math.max(largest, page.result.orders.length);
      cursor = page.result.cursor;
    } while (cursor && pages < 20);
    check(
      `walked ${pages} pages, ${orders} open orders, never more than page_size`,
      pages > 1 && largest <= 10 && cursor === null,
      `${pages} pages`,
    );

    out(
      `\n${bold('3. A direct call around Gatehouse')} ${dim('(the customers service answers only calls an executor signed an assertion for)')}`,
    );
    const aroundGatehouse = {
      customer_id: 'C-1842',
      expected_version: 17,
      destination: { kind: 'new', line1: '2 New Street', city: 'York', country: 'GB' },
    };
    out(
      `   ${bold('anyone on the network')} → curl -X POST ${CUSTOMERS}/customers/C-1842/address-changes -H 'x-tenant: acme' -H 'idempotency-key: ${session}-direct' -d '${JSON.stringify(aroundGatehouse)}'`,
    );
    const direct = await fetch(`${CUSTOMERS}/customers/C-1842/address-changes`, {
      method: 'POST',
      headers: { 'x-tenant': 'acme', 'content-type': 'application/json', 'idempotency-key': `${session}-direct` },
      body: JSON.stringify(aroundGatehouse),
    });
    const refusal = await direct.json();
    out(`   customers ← HTTP ${direct.status} ${bold(refusal.error?.code ?? '?')} ${dim(direct.headers.get('www-authenticate') ?? '')}`);
    const untouched = await call(agent, 'get_customer.v1', { customer_id: 'C-1842' });
    check(
      'refused with 401 ASSERTION_MISSING, and the customer is still at version 17; steps 4–7 make the same change through Gatehouse',
      direct.status === 401 && refusal.error?.code === 'ASSERTION_MISSING' && untouched.ok && untouched.result.version === 17,
      `HTTP ${direct.status} ${show(refusal)}`,
    );

    out(`\n${bold('4. A preview')} ${dim('(a read: computes the effect and stores a canonical proposal)')}`);
    const previewed = await call(agent, 'preview_address_change.v1', {
      customer_id: 'C-1842',
      destination: { kind: 'new', line1: '2 New Street', city: 'York', country: 'GB' },
    });
    gatehouseSays(previewed);
    check('preview returns a proposal_id and the exact effect', previewed.ok && /^p_/.test(previewed.result.proposal_id), show(previewed));
    const proposalId = previewed.ok ? previewed.result.proposal_id : 'p_missing00';

    out(`\n${bold('5. A commit that waits for approval')} ${dim('(proposal_id only: no replacement arguments)')}`);
    let pending;
    const committing = call(agent, 'commit_address_change.v2', { proposal_id: proposalId }, { onPending: (p) => (pending = p) });
    await waitFor(async () => pending, 20_000, 'pending_approval');
    out(
      `   gatehouse ← pending_approval ${show({ proposal_id: pending.proposal_id, approver_role: pending.approver_role, expires_at: new Date(pending.expires_at).toISOString() })}`,
    );
    check('the commit is pending approval by a support-lead', pending.approver_role === 'support-lead', show(pending));

    out(`\n${bold('6. An approval by a person signed in through the identity provider')}`);
    check(
      'a person signed in at the IdP approved the stored canonical proposal, recorded under their subject',
      await approveAsSignedInApprover(proposalId),
      'approval refused',
    );

    out(`\n${bold('7. The committed evidence')}`);
    const committed = await committing;
    gatehouseSays(committed);
    check(
      'committed: previous_version 17 → new_version 18, changed_fields, committed_at',
      committed.ok && committed.result.previous_version === 17 && committed.result.new_version === 18,
      show(committed),
    );

    out(`\n${bold('8. The same commit retried')}`);
    const retried = await call(agent, 'commit_address_change.v2', { proposal_id: proposalId });
    gatehouseSays(retried);
    check(
      'the retry gets the stored result — same operation, no second write',
      retried.ok && committed.ok && retried.operationId === committed.operationId,
      show(retried),
    );

    out(`\n${bold('9. A version conflict after a concurrent human edit')}`);
    const second = await call(agent, 'preview_address_change.v1', {
      customer_id: 'C-1842',
      destination: { kind: 'saved', address_id: 'addr_1842_office' },
    });
    gatehouseSays(second);
    // The CRM is the system of record's own application: its edit goes to its own database.
    const crm = new pg.Pool({
      connectionString: env.DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/gatehouse',
      max: 1,
    });
    const edited = await crm
      .query(
        `UPDATE ${tablesIn(env.CUSTOMERS_DB_SCHEMA).customers} SET line1 = $1, city = 'York', country = 'GB', postal_code = NULL, version = version + 1, updated_at = now() WHERE id = 'C-1842' AND tenant = 'acme' AND version = 18 RETURNING version`,
        ['3 Human Street'],
      )
      .finally(() => crm.end());
    out(`   ${bold('a person in the CRM')} edits C-1842 in its own application ${dim(`version 18 → ${edited.rows[0]?.version ?? '?'}`)}`);
    let pending2;
    const conflicting = call(
      agent,
      'commit_address_change.v2',
      { proposal_id: second.result.proposal_id },
      { onPending: (p) => (pending2 = p) },
    );
    await waitFor(async () => pending2, 20_000, 'pending_approval');
    await approveAsSignedInApprover(second.result.proposal_id);
    const conflict = await conflicting;
    gatehouseSays(conflict);
    check(
      'VERSION_CONFLICT: nothing changed, read again and propose anew',
      !conflict.ok && conflict.error.code === 'VERSION_CONFLICT' && conflict.error.next === 'preview_address_change.v1',
      show(conflict),
    );

    out(`\n${bold('10. A capability denial')} ${dim('(a read-only run tries a write)')}`);
    const denied = await call(readonly, 'commit_address_change.v2', { proposal_id: proposalId });
    gatehouseSays(denied);
    check(
      'CAPABILITY_DENIED with permitted and next',
      !denied.ok &&
        denied.error.code === 'CAPABILITY_DENIED' &&
        (denied.error.permitted?.length ?? 0) > 0 &&
        denied.error.next !== undefined,
      show(denied),
    );

    out(`\n${bold('11. A rate-limited call')} ${dim('(start_customer_export.v1 allows 10 per minute per tenant)')}`);
    const bursts = await Promise.all(
      Array.from({ length: 11 }, () =>
        client.call(
          'start_customer_export.v1',
          { customer_id: 'C-1842', format: 'csv' },
          { runId: ops.run_id, tenant: 'acme', runKey: ops.run_key },
        ),
      ),
    );
    agentSays('start_customer_export.v1 ×11', { customer_id: 'C-1842', format: 'csv' });
    const limited = bursts.find((r) => !r.ok && r.error.code === 'RATE_LIMITED');
    out(`   gatehouse ← ${bursts.filter((r) => r.ok).length} ok, ${bursts.filter((r) => !r.ok).length} refused`);
    if (limited) gatehouseSays(limited);
    check(
      'RATE_LIMITED with retry_after_ms, retryable',
      limited !== undefined && limited.error.retryable && limited.error.retryAfterMs > 0,
      show(bursts.map((b) => (b.ok ? 'ok' : b.error.code))),
    );

    out(
      `\n${bold('12. An unknown outcome handed to the operator')} ${dim('(the service commits, the connection drops, the status query is down)')}`,
    );
    const third = await call(agent, 'preview_address_change.v1', {
      customer_id: 'C-1842',
      destination: { kind: 'new', line1: '4 Unknown Street', city: 'York', country: 'GB' },
    });
    await http('POST', `${CUSTOMERS}/__faults`, '', { nextWrites: ['drop-after-commit'], statusDown: true });
    let pending3;
    const ambiguous = call(
      agent,
      'commit_address_change.v2',
      { proposal_id: third.result.proposal_id },
      { onPending: (p) => (pending3 = p) },
    );
    await waitFor(async () => pending3, 20_000, 'pending_approval');
    await approveAsSignedInApprover(third.result.proposal_id);
    const unknown = await ambiguous;
    await http('POST', `${CUSTOMERS}/__faults`, '', { statusDown: false });
    gatehouseSays(unknown);
    const handoff = await waitFor(async () => handoffs.find((h) => h.command_id === unknown.commandId), 10_000, 'the operator handoff');
    out(
      `   operator ← handoff ${show({ handoff_id: handoff.handoff_id, reason: handoff.reason, idempotency_key: handoff.idempotency_key })}`,
    );
    check(
      'OUTCOME_UNKNOWN, not retryable, and an OperatorHandoff on gatehouse.operator',
      !unknown.ok && unknown.status === 'unknown' && unknown.error.code === 'OUTCOME_UNKNOWN' && handoff !== undefined,
      show(unknown),
    );

    // The operator settles it as a person: signed in at the IdP (as `gatehouse operations sign-in`
    // does), with the ops-admin role the approver policy maps their groups to, in acme.
    const operator = await signInOperator();
    out(
      `   ${bold('operator')} signed in at the identity provider (device grant, as \`gatehouse operations sign-in\`): ${operator.name} (${operator.username})`,
    );
    const records = new pg.Pool({
      connectionString: env.DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/gatehouse',
      max: 1,
    });
    const committed3 = await records
      .query(`SELECT response FROM ${tablesIn(env.CUSTOMERS_DB_SCHEMA).idempotencyKeys} WHERE key = $1`, [handoff.idempotency_key])
      .finally(() => records.end());
    out(`   ${bold('operator')} finds the write in the customers service's own record of its key: it committed`);
    const resolved = await http(
      'POST',
      `${CONTROL}/operations/${encodeURIComponent(handoff.idempotency_key)}/resolve`,
      operator.accessToken,
      {
        state: 'succeeded',
        evidence: "the customers service's idempotency record shows the commit",
        result: committed3.rows[0]?.response,
      },
    );
    const by = resolved.body?.resolved_by;
    out(`   operator → resolve succeeded ${dim(`HTTP ${resolved.status}`)}${by ? dim(`, recorded as ${by.subject} of ${by.issuer}`) : ''}`);
    check(
      'the resolution is recorded under the operator the token proves, and the final result goes to the agent',
      resolved.status === 200 && by?.issuer === operator.issuer && by?.subject === operator.subject,
      show(resolved.body),
    );

    const passed = summary('steps gave the expected typed result');
    await cleanup();
    process.exit(passed ? 0 : 1);
  } catch (error) {
    out(`✖ demo aborted: ${error instanceof Error ? error.message : String(error)}`);
    await cleanup();
    process.exit(1);
  }
}

await main();
