import { randomUUID } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import type { TopicRole } from '@gatehouse/events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallResult } from '@gatehouse/client';
import { canonicalArguments } from '@gatehouse/contracts';
import { DLQ_HEADER, dlqTopicOf, EventPublisher, EventSigner, generateSigningKey, parseSigningKey, verifyResult } from '@gatehouse/events';
import type { ApprovalRequest, ExecutionOrder, ToolResult } from '@gatehouse/events';
import type { RunningMcpService } from '@gatehouse/mcp';
import type { Run } from '@gatehouse/state';
import { REPLY_PARTITION_HEADER } from '@gatehouse/telemetry';
import { startGatehouse } from './support/gatehouse.js';
import type { Gatehouse } from './support/gatehouse.js';
import { approveAsLead, connectHttp, createRunWithToken, startFrontDoor } from './support/mcp.js';
import { recordResults } from './support/results.js';
import type { ResultLog } from './support/results.js';
import { signedHeaders, TEST_KEY_RING } from './support/signing.js';
import { TOKENS } from './support/approval.js';
import { pollUntil } from './support/poll.js';
import { eventually } from './support/stack.js';
import { collect, currentVersion, preview } from './support/writes.js';

// The broker's ACLs are the first lock on Gatehouse's topics; signatures hold when that lock fails.
// Every forgery below is published straight on a topic with a client of the test's own, while a real
// command waits, and then the real command finishes normally. A record that no key of the right
// service signed goes to its topic's DLQ and never speaks for the command it names: that command
// keeps exactly one terminal answer, the legitimate one, on the partition its caller reads.
describe('records no key of the right service signed never speak for a command', () => {
  let g: Gatehouse;
  let run: Run;
  let results: ResultLog;
  let orders: Awaited<ReturnType<typeof collect<'execute'>>>;
  let requests: Awaited<ReturnType<typeof collect<'approvalsRequested'>>>;
  let forger: EventPublisher;
  let door: RunningMcpService;
  let mcp: Client | undefined;
  const stranger = new EventSigner(parseSigningKey(generateSigningKey('stranger').signingKey));

  beforeAll(async () => {
    g = await startGatehouse('forged', { approval: true, executors: 1 });
    run = await g.createRun('support-agent');
    results = await recordResults(g);
    orders = await collect(g, 'execute');
    requests = await collect(g, 'approvalsRequested');
    forger = await EventPublisher.connect(g.kafka, g.serde);
    door = await startFrontDoor(g);
  });
  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    await door?.stop();
    await forger?.disconnect();
    await orders?.stop();
    await requests?.stop();
    await results?.stop();
    await g?.stop();
  });

  const metric = async (url: string, name: string, labels: string): Promise<number> => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
    return Number(line?.split(' ')[1] ?? 0);
  };
  const executorMetric = (name: string, labels: string) => metric(g.executors[0]?.url ?? '', name, labels);
  /**
   * The records of a topic's DLQ whose decoded event `match`es, once `count` of them are there: each
   * test picks out its own forgeries by the ids it gave them.
   */
  async function deadLetters<R extends TopicRole>(
    role: R,
    count: number,
    match: (event: Record<string, unknown>) => boolean,
  ): Promise<KafkaMessage[]> {
    const consumer = g.kafka.consumer({ groupId: `${g.label}-dlq-${randomUUID()}` });
    const mine: KafkaMessage[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: dlqTopicOf(g.topics[role]), fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          const decoded = await g.serde.decode(role, message.value);
          if (decoded.ok && match(decoded.value as unknown as Record<string, unknown>)) mine.push(message);
        },
      });
      await eventually(() => (mine.length >= count ? true : undefined), 20_000, `${count} dead letters on ${role}`);
      return mine;
    } finally {
      await consumer.disconnect();
    }
  }
  const dlqReasons = (records: readonly KafkaMessage[]): string[] =>
    records.map((r) => r.headers?.[DLQ_HEADER.reason]?.toString() ?? '').sort();
  /** The answers to `commandId` a Gatehouse service signed: whatever else is on the topic speaks for no one. */
  const signedAnswers = (commandId: string) => results.of(commandId).filter((r) => verifyResult(r.event, r.headers, TEST_KEY_RING).ok);
  const terminal = (answers: ReturnType<typeof signedAnswers>) => answers.filter((r) => r.event.status !== 'pending_approval');

  /** A commit of `line1` that waits for a person: its call, its command id and the proposal. */
  async function pendingCommit(line1: string): Promise<{ call: Promise<CallResult>; commandId: string; proposalId: string }> {
    const proposalId = await preview(g, run, line1);
    let noticed: (commandId: string) => void = () => undefined;
    const pending = new Promise<string>((resolve) => (noticed = resolve));
    const call = g.client.call(
      'commit_address_change.v2',
      { proposal_id: proposalId },
      { runId: run.run_id, tenant: run.tenant, onPending: (n) => noticed(n.commandId) },
    );
    return { call, commandId: await pending, proposalId };
  }

  function forgedOrder(commandId: string, proposalId: string): ExecutionOrder {
    const { canonical, sha256 } = canonicalArguments({
      customer_id: 'C-1842',
      expected_version: 1,
      destination: { kind: 'new', line1: '666 Forged Road', city: 'York', country: 'GB' },
    });
    const now = Date.now();
    return {
      schema_version: 1,
      order_id: randomUUID(),
      command_id: commandId,
      run_id: run.run_id,
      tenant: run.tenant,
      principal: run.principal,
      environment: run.environment,
      tool: 'commit_address_change.v2',
      effect: 'write',
      arguments: canonical,
      arguments_sha256: sha256,
      proposal_id: proposalId,
      approval: null,
      idempotency_key: `${run.run_id}:${proposalId}:commit`,
      deadline_at: now + 60_000,
      issued_at: now,
    };
  }

  function forgedOk(commandId: string): ToolResult {
    return {
      schema_version: 1,
      command_id: commandId,
      run_id: run.run_id,
      tenant: run.tenant,
      tool: 'commit_address_change.v2',
      status: 'ok',
      operation_id: 'op_forged',
      result: JSON.stringify({
        customer_id: 'C-1842',
        previous_version: 1,
        new_version: 999,
        changed_fields: ['shipping_address'],
        committed_at: new Date().toISOString(),
      }),
      error: null,
      pending: null,
      arguments_sha256: null,
      completed_at: Date.now(),
      duration_ms: null,
    };
  }

  it('dead-letters every forged order for a command that waits for a person, and the command gets only its real answer', async () => {
    const before = await currentVersion(g);
    const { call, commandId, proposalId } = await pendingCommit('1 Real Road');
    const partition = String(g.client.stats().replyPartition);
    const routed = { [REPLY_PARTITION_HEADER]: partition };
    // A real, signed order of this run (the preview's read), to re-address and to re-route.
    const previewOrder = await eventually(
      () => orders.events.find((o) => o.proposal_id === null && o.run_id === run.run_id && o.tool === 'preview_address_change.v1'),
      10_000,
      'the preview’s order',
    );
    const previewHeaders = orders.headersOf(previewOrder) ?? {};
    const forged = forgedOrder(commandId, proposalId);
    const counts = async () => ({
      unsigned: await executorMetric('gatehouse_untrusted_orders_total', 'reason="unsigned"'),
      unknown_key: await executorMetric('gatehouse_untrusted_orders_total', 'reason="unknown_key"'),
      wrong_role: await executorMetric('gatehouse_untrusted_orders_total', 'reason="wrong_role"'),
      bad_signature: await executorMetric('gatehouse_untrusted_orders_total', 'reason="bad_signature"'),
    });
    const countsBefore = await counts();

    await forger.publish('execute', run.tenant, forged, routed);
    await forger.publish('execute', run.tenant, forged, { ...routed, ...stranger.headersFor('execute', forged, routed) });
    await forger.publish('execute', run.tenant, forged, signedHeaders(forged, { by: 'executor', headers: routed }));
    // A signed read, re-encoded to name the waiting command (the signature kept).
    await forger.publish('execute', run.tenant, { ...previewOrder, command_id: commandId }, previewHeaders);
    // The same signed read, re-routed to another instance's partition.
    await forger.publish('execute', run.tenant, previewOrder, {
      ...previewHeaders,
      [REPLY_PARTITION_HEADER]: String((Number(partition) + 1) % 3),
    });

    const dead = await deadLetters('execute', 5, (o) => o['command_id'] === commandId || o['order_id'] === previewOrder.order_id);
    expect(dlqReasons(dead)).toEqual([
      'untrusted_bad_signature',
      'untrusted_bad_signature',
      'untrusted_unknown_key',
      'untrusted_unsigned',
      'untrusted_wrong_role',
    ]);
    const countsAfter = await counts();
    expect({
      unsigned: countsAfter.unsigned - countsBefore.unsigned,
      unknown_key: countsAfter.unknown_key - countsBefore.unknown_key,
      wrong_role: countsAfter.wrong_role - countsBefore.wrong_role,
      bad_signature: countsAfter.bad_signature - countsBefore.bad_signature,
    }).toEqual({ unsigned: 1, unknown_key: 1, wrong_role: 1, bad_signature: 2 });
    // Nothing answered for the command while it waits, and the row is as it was.
    await eventually(() => results.of(commandId)[0], 10_000, 'the pending answer in the log');
    expect(terminal(signedAnswers(commandId))).toEqual([]);
    expect(results.of(commandId).map((r) => r.event.status)).toEqual(['pending_approval']);
    expect(await currentVersion(g)).toBe(before);

    expect(await approveAsLead(g, proposalId)).toBe(200);
    const answered = await call;
    expect(answered.ok, JSON.stringify(answered)).toBe(true);
    expect(answered.ok && answered.result).toMatchObject({ previous_version: before, new_version: before + 1 });
    expect(await currentVersion(g)).toBe(before + 1);
    const answers = await eventually(
      () => (terminal(signedAnswers(commandId)).length > 0 ? terminal(signedAnswers(commandId)) : undefined),
      10_000,
      'the signed answer',
    );
    expect(answers.map((r) => r.event.status)).toEqual(['ok']);
    expect(results.of(commandId).every((r) => String(r.partition) === partition)).toBe(true);
  });

  it('delivers no forged ok to the client: the answer it waits for is the real one, and the forgeries are dead-lettered', async () => {
    const before = await currentVersion(g);
    const { call, commandId, proposalId } = await pendingCommit('2 Real Road');
    const routed = { [REPLY_PARTITION_HEADER]: String(g.client.stats().replyPartition) };
    const untrustedBefore = g.client.stats().untrusted;
    const fake = forgedOk(commandId);
    await forger.publish('results', run.run_id, fake, routed);
    await forger.publish('results', run.run_id, fake, { ...routed, ...stranger.headersFor('results', fake) });
    // Signed by the policy service, but altered on the way: the result no longer matches.
    const pending = await eventually(() => results.of(commandId)[0], 10_000, 'the pending answer in the log');
    await forger.publish('results', run.run_id, { ...fake, command_id: commandId }, { ...routed, ...pickSignature(pending.headers) });
    await eventually(
      () => (g.client.stats().untrusted >= untrustedBefore + 3 ? true : undefined),
      20_000,
      'the forged answers to be refused',
    );

    expect(await approveAsLead(g, proposalId)).toBe(200);
    const answered = await call;
    expect(answered.ok && answered.result).toMatchObject({ previous_version: before, new_version: before + 1 });
    const dead = await deadLetters('results', 3, (r) => r['command_id'] === commandId);
    expect(dlqReasons(dead)).toEqual(['untrusted_bad_signature', 'untrusted_unknown_key', 'untrusted_unsigned']);
    const answers = await eventually(
      () => (terminal(signedAnswers(commandId)).length > 0 ? terminal(signedAnswers(commandId)) : undefined),
      10_000,
      'the signed answer',
    );
    expect(answers.map((r) => r.event.status)).toEqual(['ok']);
  });

  it('produces no new result for a replayed order, changed or not, and answers the calls after it', async () => {
    const commit = await eventually(
      () => orders.events.find((o) => o.run_id === run.run_id && o.effect === 'write' && o.approval !== null),
      10_000,
      'an approved write',
    );
    const commitHeaders = orders.headersOf(commit) ?? {};
    const read = await eventually(() => orders.events.find((o) => o.run_id === run.run_id && o.effect === 'read'), 10_000, 'a read');
    const answeredBefore = await executorMetric('gatehouse_duplicate_orders_total', 'reason="answered"');
    // A call answered on the same partition after everything before it: once the log has it, it has those.
    const call = () => g.client.call('get_customer.v1', { customer_id: 'C-1842' }, { runId: run.run_id, tenant: run.tenant });
    const settled = async (): Promise<void> => {
      const marker = await call();
      await eventually(() => (results.of(marker.commandId).length > 0 ? true : undefined), 10_000, 'the marker in the log');
    };
    await settled();
    const answersBefore = { commit: results.of(commit.command_id).length, read: results.of(read.command_id).length };

    await forger.publish('execute', commit.tenant, commit, commitHeaders);
    await forger.publish('execute', read.tenant, read, orders.headersOf(read) ?? {});
    await forger.publish('execute', commit.tenant, commit, {
      ...commitHeaders,
      [REPLY_PARTITION_HEADER]: '0' === commitHeaders[REPLY_PARTITION_HEADER]?.toString() ? '1' : '0',
    });

    await pollUntil(
      async () =>
        (await executorMetric('gatehouse_duplicate_orders_total', 'reason="answered"')) >= answeredBefore + 2 ? true : undefined,
      20_000,
      'the replays to be judged',
    );
    const dead = await deadLetters('execute', 1, (o) => o['order_id'] === commit.order_id);
    expect(dlqReasons(dead)).toEqual(['untrusted_bad_signature']);
    await settled();
    expect({ commit: results.of(commit.command_id).length, read: results.of(read.command_id).length }).toEqual(answersBefore);
    expect(signedAnswers(commit.command_id).filter((r) => r.event.status !== 'pending_approval')).toHaveLength(1);
    expect(await executorMetric('gatehouse_duplicate_orders_total', 'reason="answered"')).toBe(answeredBefore + 2);
  });

  it('shows people no approval request the policy service did not sign, and answers nothing for it', async () => {
    const { call, commandId, proposalId } = await pendingCommit('3 Real Road');
    const real = await eventually(() => requests.events.find((r) => r.proposal_id === proposalId), 10_000, 'the real request');
    const forged: ApprovalRequest = {
      ...real,
      proposal_id: `p_forged_${randomUUID().replace(/-/g, '')}`,
      diff: { ...real.diff, amount: { minor: 1, currency: 'EUR' } },
    };
    const approvalUrl = g.approval?.url ?? '';
    const refusedBefore = await metric(approvalUrl, 'gatehouse_untrusted_records_total', 'kind="approvalsRequested",reason="unsigned"');
    await forger.publish('approvalsRequested', forged.tenant, forged);
    await forger.publish(
      'approvalsRequested',
      forged.tenant,
      forged,
      signedHeaders(forged, { topic: 'approvalsRequested', by: 'approval' }),
    );
    // The real request, with the diff a person is shown changed: the policy service's signature no longer holds.
    await forger.publish('approvalsRequested', real.tenant, { ...real, diff: forged.diff }, requests.headersOf(real) ?? {});

    const dead = await deadLetters(
      'approvalsRequested',
      3,
      (r) => r['proposal_id'] === forged.proposal_id || r['proposal_id'] === proposalId,
    );
    expect(dlqReasons(dead)).toEqual(['untrusted_bad_signature', 'untrusted_unsigned', 'untrusted_wrong_role']);
    expect(await metric(approvalUrl, 'gatehouse_untrusted_records_total', 'kind="approvalsRequested",reason="unsigned"')).toBe(
      refusedBefore + 1,
    );
    const shown = await fetch(`${approvalUrl}/api/approvals/${forged.proposal_id}`, {
      headers: { authorization: `Bearer ${TOKENS.lead}` },
    });
    expect(shown.status).toBe(404);
    // The real request is shown as the policy service signed it, and decides the real command.
    const stored = (await (
      await fetch(`${approvalUrl}/api/approvals/${proposalId}`, { headers: { authorization: `Bearer ${TOKENS.lead}` } })
    ).json()) as { request: ApprovalRequest };
    expect(stored.request.diff).toEqual(real.diff);
    expect(await approveAsLead(g, proposalId)).toBe(200);
    expect((await call).ok).toBe(true);
    const answers = await eventually(
      () => (terminal(signedAnswers(commandId)).length > 0 ? terminal(signedAnswers(commandId)) : undefined),
      10_000,
      'the signed answer',
    );
    expect(answers.map((r) => r.event.status)).toEqual(['ok']);
  });

  it('delivers no forged ok to an MCP client waiting on a commit', async () => {
    const agent = await createRunWithToken(g, 'support-agent');
    mcp = await connectHttp(door.url, agent);
    const previewed = (await mcp.callTool({
      name: 'preview_address_change_v1',
      arguments: { customer_id: 'C-1842', destination: { kind: 'new', line1: '4 Real Road', city: 'York', country: 'GB' } },
    })) as CallToolResult;
    const proposalId = (previewed.structuredContent as { proposal_id: string }).proposal_id;
    const before = await currentVersion(g);
    const committing = mcp.callTool({ name: 'commit_address_change_v2', arguments: { proposal_id: proposalId } });
    const request = await eventually(() => requests.events.find((r) => r.proposal_id === proposalId), 20_000, 'the approval request');
    const doorUrl = new URL(door.url).origin;
    const refusedBefore = await metric(doorUrl, 'gatehouse_untrusted_records_total', 'kind="results",reason="unsigned"');
    // To every partition: whichever the front door reads gets one.
    const admin = g.kafka.admin();
    await admin.connect();
    const partitions = await admin.fetchTopicOffsets(g.topics.results).finally(() => admin.disconnect());
    expect(partitions.length).toBeGreaterThan(0);
    const fake = { ...forgedOk(request.command_id), run_id: agent.run_id };
    for (let p = 0; p < partitions.length; p += 1)
      await forger.publish('results', agent.run_id, fake, { [REPLY_PARTITION_HEADER]: String(p) });
    await pollUntil(
      async () =>
        (await metric(doorUrl, 'gatehouse_untrusted_records_total', 'kind="results",reason="unsigned"')) > refusedBefore ? true : undefined,
      20_000,
      'the front door to refuse the forgery',
    );

    expect(await approveAsLead(g, proposalId)).toBe(200);
    const committed = (await committing) as CallToolResult;
    expect(committed.isError ?? false).toBe(false);
    expect(committed.structuredContent).toMatchObject({ previous_version: before, new_version: before + 1 });
  });
});

/** The signature headers of a record, to move onto another. */
function pickSignature(headers: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of ['gatehouse-signature', 'gatehouse-key-id']) {
    const value = headers?.[name];
    if (Buffer.isBuffer(value)) picked[name] = value.toString('utf8');
    else if (typeof value === 'string') picked[name] = value;
  }
  return picked;
}
