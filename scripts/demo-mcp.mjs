// `npm run demo:mcp`: one agent session through the MCP front door, as any MCP client would run it —
// the SDK's own client over Streamable HTTP with the run's bearer token — against the whole system
// (the local stack and every service as its own process), approval included. Prints what the model
// would be shown; exits 0 only if every step gave the expected result.
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
  waitFor,
} from './demo-kit.mjs';
import { requirePrerequisites } from './prerequisites.mjs';
import { startServices } from './services.mjs';
import { build, stackDown, stackUp } from './stack-lifecycle.mjs';

await requirePrerequisites();
build();
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');

const { env } = demoEnv('demo-mcp', { MCP_PROGRESS_MS: '1000' });
const MCP = 'http://127.0.0.1:8095/mcp';
const { check, summary } = checklist();

/** What the model is shown of a result: its text content, and (for the program) _meta's status. */
function modelSees(result) {
  const texts = result.content.filter((c) => c.type === 'text').map((c) => c.text);
  const shown = texts.at(-1) ?? '';
  out(`   model ← ${result.isError ? bold('isError ') : ''}${shown.length > 160 ? `${shown.slice(0, 160)}…` : shown}`);
  if (texts.length > 1) out(dim(`           (after the note: "${texts[0]}")`));
}

async function createRun(role, principal) {
  const { status, body } = await http('POST', `${CONTROL}/runs`, await orchestratorToken(), {
    tenant: 'acme',
    principal,
    role,
    environment: 'production',
    ttl_ms: 3_600_000,
    mcp_token: true,
    on_behalf_of: AGENT_OWNER,
  });
  if (status !== 201) throw new Error(`run registration answered ${status}: ${show(body)}`);
  return body;
}

async function connect(run) {
  const client = new Client({ name: 'gatehouse-demo-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(MCP), { requestInit: { headers: { authorization: `Bearer ${run.mcp_token}` } } }),
  );
  return client;
}

async function main() {
  out(bold('Gatehouse demo — an agent session through the MCP front door'));
  out(dim('Bringing up the local stack and the services…'));
  const started = stackUp();
  let services;
  const clients = [];
  const cleanup = async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await services?.stop();
    stackDown(started);
  };
  try {
    services = await startServices({
      names: ['customers', 'policy', 'approval', 'executor-1', 'mcp'],
      env,
      say: (line) => out(dim(`   ${line}`)),
      ...(process.env.GATEHOUSE_DEMO_LOGS ? { logsDir: process.env.GATEHOUSE_DEMO_LOGS } : {}),
    });

    out(`\n${bold('0. Trusted code registers a run and asks for its MCP token')} ${dim('(gatehouse runs create --mcp-token)')}`);
    const agent = await createRun('support-agent', 'agent:demo-mcp-bot');
    const readonly = await createRun('support-readonly', 'agent:demo-mcp-lookup');
    out(`   ${agent.run_id}: token ${agent.mcp_token.slice(0, 8)}… (shown once; stored hashed; stopped with the run)`);
    out(dim(`   an MCP client connects to ${MCP} with  Authorization: Bearer <token>`));
    const client = await connect(agent);
    clients.push(client);
    check('the SDK client connected and initialized', client.getServerVersion()?.name === 'gatehouse', show(client.getServerVersion()));

    out(`\n${bold('1. tools/list')} ${dim("(the run's permitted tools, versioned names, annotations, _meta)")}`);
    const { tools } = await client.listTools();
    for (const tool of tools.slice(0, 4)) {
      out(
        `   ${tool.name.padEnd(30)} ${dim(`readOnly=${tool.annotations?.readOnlyHint} destructive=${tool.annotations?.destructiveHint} effect=${tool._meta?.['gatehouse/effect']} retry=${tool._meta?.['gatehouse/retry']}`)}`,
      );
    }
    if (tools.length > 4) out(dim(`   … ${tools.length - 4} more`));
    check(
      `${tools.length} tools, named with their version`,
      tools.length === agent.capabilities.length && tools.every((t) => /_v\d+$/.test(t.name)),
      show(tools.map((t) => t.name)),
    );

    out(`\n${bold('2. A read')}`);
    out(`   agent → ${bold('get_customer_v1')} {"customer_id":"C-1842"}`);
    const customer = await client.callTool({ name: 'get_customer_v1', arguments: { customer_id: 'C-1842' } });
    modelSees(customer);
    check(
      'structuredContent is the validated result, the same JSON is in content as data',
      customer.structuredContent?.customer_id === 'C-1842' && JSON.parse(customer.content[1].text).customer_id === 'C-1842',
      show(customer),
    );

    out(`\n${bold('3. A preview')}`);
    const destination = { kind: 'new', line1: '5 Protocol Street', city: 'York', country: 'GB' };
    out(`   agent → ${bold('preview_address_change_v1')} ${show({ customer_id: 'C-1842', destination })}`);
    const previewed = await client.callTool({ name: 'preview_address_change_v1', arguments: { customer_id: 'C-1842', destination } });
    modelSees(previewed);
    const proposalId = previewed.structuredContent?.proposal_id;
    check('a proposal_id and the exact effect', typeof proposalId === 'string', show(previewed));

    out(`\n${bold('4. The commit waits for a person')} ${dim('(progress notifications while it waits)')}`);
    out(`   agent → ${bold('commit_address_change_v2')} ${show({ proposal_id: proposalId })}`);
    let progressed;
    const committing = client.callTool({ name: 'commit_address_change_v2', arguments: { proposal_id: proposalId } }, undefined, {
      onprogress: (p) => {
        if (progressed === undefined) out(`   progress ← ${p.message}`);
        progressed ??= p;
      },
      resetTimeoutOnProgress: true,
    });
    const approver = await signInApprover(APPROVAL);
    out(`   ${bold('approver')} signed in at the identity provider's login page: ${approver.me.name} (${approver.me.identity})`);
    const shown = await waitFor(
      async () => {
        const r = await http('GET', `${APPROVAL}/api/approvals/${proposalId}`, approver);
        return r.status === 200 ? r.body : undefined;
      },
      20_000,
      'the pending request in the approval service',
    );
    const change = shown.request.diff.changes[0];
    out(`   ${bold('approver')} ${approver.me.identity} sees: ${change.field}: ${change.before} → ${change.after}`);
    const approvedStatus = (await http('POST', `${APPROVAL}/api/approvals/${proposalId}/approve`, approver, shownIn(shown))).status;
    out(`   approver → approve ${dim(`HTTP ${approvedStatus}`)}`);
    const committed = await committing;
    modelSees(committed);
    check(
      'approved through the approval API, then the committed result in the same call',
      approvedStatus === 200 && committed.structuredContent?.new_version === 18,
      show(committed),
    );

    out(`\n${bold('5. The same commit again')}`);
    const again = await client.callTool({ name: 'commit_address_change_v2', arguments: { proposal_id: proposalId } });
    modelSees(again);
    check(
      'the stored result, same operation: no second write',
      again._meta?.['gatehouse/operation_id'] === committed._meta?.['gatehouse/operation_id'],
      show(again._meta),
    );

    out(`\n${bold('6. A refusal')} ${dim('(a read-only run tries the write)')}`);
    const lookup = await connect(readonly);
    clients.push(lookup);
    const denied = await lookup.callTool({ name: 'commit_address_change_v2', arguments: { proposal_id: proposalId } });
    modelSees(denied);
    check(
      'isError, no structuredContent, the typed error in content and _meta',
      denied.isError === true && denied.structuredContent === undefined && denied._meta?.['gatehouse/error']?.code === 'CAPABILITY_DENIED',
      show(denied),
    );

    out(`\n${bold('7. Without the token')}`);
    const refused = await fetch(MCP, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: show({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    out(`   HTTP ${refused.status}  WWW-Authenticate: ${refused.headers.get('www-authenticate')}`);
    check(
      '401 with WWW-Authenticate',
      refused.status === 401 && (refused.headers.get('www-authenticate') ?? '').startsWith('Bearer '),
      String(refused.status),
    );

    const passed = summary('MCP steps gave the expected result');
    await cleanup();
    process.exit(passed ? 0 : 1);
  } catch (error) {
    out(`✖ demo aborted: ${error instanceof Error ? error.message : String(error)}`);
    await cleanup();
    process.exit(1);
  }
}

await main();
