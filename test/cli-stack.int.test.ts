// The gatehouse CLI, run as a child process from its build, against a whole Gatehouse in this
// process: runs over the control API, approvals over the approval API, operations, and dead letters
// read from and replayed to Kafka.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallResult, PendingNotice } from '@gatehouse/client';
import { dlqTopicOf, DLQ_HEADER } from '@gatehouse/events';
import { RunRegistry, RunTokens } from '@gatehouse/state';
import type { Run } from '@gatehouse/state';
import type { KafkaMessage } from 'kafkajs';
import { IDENTITIES, TOKENS, waitUntil } from './support/approval.js';
import { CONTROL_TOKEN, startGatehouse } from './support/gatehouse.js';
import { PEOPLE, tokensOf } from './support/identity.js';
import type { Gatehouse } from './support/gatehouse.js';
import { eventually, readRaw } from './support/stack.js';
import { currentVersion, preview } from './support/writes.js';

const MAIN = fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url));

interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built CLI asynchronously: the services it talks to live in this very process. */
function gatehouse(args: readonly string[], env: Readonly<Record<string, string>>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: { ...process.env, ...env }, timeout: 50_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
      },
    );
  });
}

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function header(message: KafkaMessage, name: string): string | undefined {
  return message.headers?.[name]?.toString();
}

describe('the gatehouse CLI against a running Gatehouse', () => {
  let g: Gatehouse;
  let env: Record<string, string>;
  const as = (who: keyof typeof TOKENS): Record<string, string> => ({ ...env, GATEHOUSE_APPROVER_TOKEN: TOKENS[who] });

  beforeAll(async () => {
    g = await startGatehouse('cli', { approval: true, operators: true });
    env = {
      GATEHOUSE_CONTROL_URL: g.policies[0]?.url ?? '',
      GATEHOUSE_CONTROL_TOKEN: CONTROL_TOKEN,
      GATEHOUSE_APPROVAL_URL: g.approval?.url ?? '',
      GATEHOUSE_APPROVER_TOKEN: TOKENS.lead,
      GATEHOUSE_TOPIC_PREFIX: g.topicPrefix,
    };
  });
  afterAll(async () => {
    await g.stop();
  });

  describe('runs', () => {
    const tenant = `cli-${randomUUID().slice(0, 8)}`;

    it('creates runs and lists them as a table and as JSON', async () => {
      const created = await gatehouse(
        [
          'runs',
          'create',
          '--tenant',
          tenant,
          '--principal',
          'agent:cli-bot',
          '--role',
          'support-readonly',
          '--environment',
          'sandbox',
          '--ttl',
          '15m',
          '--json',
        ],
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      const run = JSON.parse(created.stdout) as Run;
      expect(run).toMatchObject({ tenant, principal: 'agent:cli-bot', role: 'support-readonly', environment: 'sandbox', stopped_at: null });
      expect(run.capabilities).toEqual(['get_customer.v1', 'get_operation.v1', 'list_open_orders_for_customer.v1']);
      expect(run.expires_at - run.created_at).toBe(15 * 60_000);

      const runId = `run_cli_${randomUUID().slice(0, 8)}`;
      const table = await gatehouse(
        [
          'runs',
          'create',
          '--tenant',
          tenant,
          '--principal',
          'agent:cli-bot',
          '--role',
          'support-agent',
          '--environment',
          'staging',
          '--capability',
          'get_customer.v1',
          '--run-id',
          runId,
        ],
        env,
      );
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(new RegExp(`^run:\\s+${runId}$`, 'm'));
      expect(table.stdout).toMatch(/^capabilities:\s+get_customer\.v1$/m);

      const list = await gatehouse(['runs', 'list', '--tenant', tenant], env);
      expect(list.code, list.stderr).toBe(0);
      const lines = list.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^RUN\s+STATE\s+ROLE\s+PRINCIPAL\s+ENV\s+TOOLS\s+CREATED\s+EXPIRES$/);
      expect(lines).toHaveLength(3);
      expect(lines.find((l) => l.startsWith(`${run.run_id} `))).toMatch(/active\s+support-readonly\s+agent:cli-bot\s+sandbox\s+3\s/);
      expect(lines.find((l) => l.startsWith(`${runId} `))).toMatch(/active\s+support-agent\s+agent:cli-bot\s+staging\s+1\s/);

      const stopped = await gatehouse(['runs', 'stop', runId], env);
      expect(stopped.stdout).toBe(`${runId}: stopped\n`);
      const json = await gatehouse(['runs', 'list', '--tenant', tenant, '--json'], env);
      expect(json.code, json.stderr).toBe(0);
      const listed = JSON.parse(json.stdout) as Run[];
      expect(listed.map((r) => r.run_id).sort()).toEqual([run.run_id, runId].sort());
      expect(listed.find((r) => r.run_id === runId)?.stopped_at).toEqual(expect.any(Number));
    });

    it("issues a run's MCP token once with --mcp-token; stopping the run revokes it", async () => {
      const own = `cli-mcp-${randomUUID().slice(0, 8)}`;
      const tokens = new RunTokens(g.redis, g.keys, new RunRegistry(g.redis, g.keys));
      const created = await gatehouse(
        [
          'runs',
          'create',
          '--tenant',
          own,
          '--principal',
          'agent:cli-bot',
          '--role',
          'support-readonly',
          '--environment',
          'sandbox',
          '--mcp-token',
          '--json',
        ],
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      const run = JSON.parse(created.stdout) as Run & { mcp_token: string };
      expect(run.mcp_token).toMatch(/^ghr_[\w-]{43}$/);
      expect(await tokens.check(run.mcp_token)).toMatchObject({ ok: true, run: { run_id: run.run_id, tenant: own } });
      const table = await gatehouse(
        [
          'runs',
          'create',
          '--tenant',
          own,
          '--principal',
          'agent:cli-bot',
          '--role',
          'support-readonly',
          '--environment',
          'sandbox',
          '--mcp-token',
        ],
        env,
      );
      expect(table.stdout).toMatch(/^mcp token:\s+ghr_[\w-]{43}$/m);
      // Another token for the same run, from the control API; both stop working with the run.
      const again = await fetch(`${env['GATEHOUSE_CONTROL_URL'] ?? ''}/runs/${run.run_id}/mcp-tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env['GATEHOUSE_CONTROL_TOKEN'] ?? ''}` },
      });
      expect(again.status).toBe(201);
      const second = ((await again.json()) as { mcp_token: string }).mcp_token;
      expect(second).not.toBe(run.mcp_token);
      expect((await tokens.check(second)).ok).toBe(true);
      expect((await gatehouse(['runs', 'stop', run.run_id], env)).code).toBe(0);
      expect(await tokens.check(run.mcp_token)).toEqual({ ok: false, reason: 'run_inactive' });
      expect(await tokens.check(second)).toEqual({ ok: false, reason: 'run_inactive' });
      expect(await tokens.check('ghr_not-a-token-of-any-run-000000000000000000000')).toEqual({ ok: false, reason: 'unknown' });
    });

    it('exits 1 when the service refuses, 3 when it cannot be reached and 2 on a usage error', async () => {
      const badToken = await gatehouse(['runs', 'list', '--tenant', tenant], { ...env, GATEHOUSE_CONTROL_TOKEN: 'not-the-control-token' });
      expect(badToken.code).toBe(1);
      expect(badToken.stderr).toContain('401 UNAUTHORIZED');

      const unknownRole = await gatehouse(
        ['runs', 'create', '--tenant', tenant, '--principal', 'p', '--role', 'janitor', '--environment', 'sandbox', '--json'],
        env,
      );
      expect(unknownRole.code).toBe(1);
      const refusal = JSON.parse(unknownRole.stderr) as { error: { permitted: string[] } };
      expect(refusal).toMatchObject({ error: { code: 'UNKNOWN_ROLE', status: 422, exit_code: 1 } });
      expect(refusal.error.permitted).toContain('support-agent');

      const missing = await gatehouse(['runs', 'show', 'run_does_not_exist'], env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('RUN_NOT_FOUND');

      const port = await closedPort();
      const unreachable = await gatehouse(['runs', 'list', '--tenant', tenant], {
        ...env,
        GATEHOUSE_CONTROL_URL: `http://127.0.0.1:${port}`,
      });
      expect(unreachable.code).toBe(3);
      expect(unreachable.stderr).toContain(`cannot reach the control API at http://127.0.0.1:${port}: ECONNREFUSED`);

      const unknownCommand = await gatehouse(['runz', 'list'], env);
      expect(unknownCommand.code).toBe(2);
      expect(unknownCommand.stderr).toContain('unknown command "runz"');
      const badTtl = await gatehouse(
        ['runs', 'create', '--tenant', tenant, '--principal', 'p', '--role', 'support-agent', '--environment', 'sandbox', '--ttl', 'soon'],
        env,
      );
      expect(badTtl.code).toBe(2);
    });
  });

  describe('approvals and operations', () => {
    let run: Run;

    beforeAll(async () => {
      run = await g.createRun('support-agent', { principal: 'agent:support-bot' });
    });

    /** Previews a change and sends its commit; resolves once the approval service holds the pending request. */
    async function pendingCommit(line1: string, customerId: string): Promise<{ proposalId: string; settled: Promise<CallResult> }> {
      const proposalId = await preview(g, run, line1, customerId);
      let notice: PendingNotice | undefined;
      const settled = g.client.call(
        'commit_address_change.v2',
        { proposal_id: proposalId },
        { runId: run.run_id, tenant: run.tenant, timeoutMs: 60_000, onPending: (p) => (notice = p) },
      );
      await eventually(() => notice, 20_000, 'pending_approval');
      await waitUntil(async () => {
        const response = await fetch(`${g.approval?.url ?? ''}/api/approvals/${proposalId}`, {
          headers: { authorization: `Bearer ${TOKENS.lead}` },
        });
        return response.status === 200 ? true : undefined;
      }, `request ${proposalId} stored`);
      return { proposalId, settled };
    }

    it('lists and shows a pending request, refuses an approver without the role, and approves as a lead', async () => {
      const { proposalId, settled } = await pendingCommit('21 Command Line', 'C-1842');

      const list = await gatehouse(['approvals', 'list', '--tenant', 'acme'], env);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout.split('\n')[0]).toMatch(
        /^PROPOSAL\s+STATE\s+TENANT\s+TOOL\s+ENV\s+TARGET\s+EFFECT\s+APPROVER ROLE\s+EXPIRES\s+DECISION$/,
      );
      const row = list.stdout.split('\n').find((l) => l.startsWith(`${proposalId} `));
      expect(row).toMatch(/pending\s+acme\s+commit_address_change\.v2\s+sandbox\s+customer:C-1842@v17\s/);
      expect(row).toMatch(/support-lead\s+in \d+m\d*s?\s+you may decide$/);

      const asViewer = await gatehouse(['approvals', 'list', '--json'], as('viewer'));
      const seen = (JSON.parse(asViewer.stdout) as { proposal_id: string; may_decide: boolean; may_not_because: string | null }[]).find(
        (r) => r.proposal_id === proposalId,
      );
      expect(seen).toMatchObject({ may_decide: false, may_not_because: 'UNAUTHORIZED_APPROVER' });

      const show = await gatehouse(['approvals', 'show', proposalId], env);
      expect(show.code, show.stderr).toBe(0);
      expect(show.stdout).toMatch(/^principal:\s+agent:support-bot$/m);
      expect(show.stdout).toMatch(/^approver role:\s+support-lead \(rule /m);
      expect(show.stdout).toMatch(/^ {2}shipping_address: .* → .*21 Command Line/m);
      const detail = JSON.parse((await gatehouse(['approvals', 'show', proposalId, '--json'], env)).stdout) as {
        state: string;
        request: { proposal_id: string; arguments: string; arguments_sha256: string };
      };
      expect(detail).toMatchObject({ state: 'pending', request: { proposal_id: proposalId } });
      expect(show.stdout).toContain(detail.request.arguments_sha256);

      const refused = await gatehouse(['approvals', 'approve', proposalId], as('viewer'));
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('403 UNAUTHORIZED_APPROVER');
      expect(await currentVersion(g)).toBe(17);

      const approved = await gatehouse(['approvals', 'approve', proposalId], env);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toBe(`${proposalId}: approved by ${IDENTITIES.lead}\n`);
      const result = await settled;
      expect(result.ok && result.result).toMatchObject({ customer_id: 'C-1842', previous_version: 17, new_version: 18 });

      const again = await gatehouse(['approvals', 'approve', proposalId, '--json'], env);
      expect(again.code).toBe(1);
      expect(JSON.parse(again.stderr)).toMatchObject({ error: { code: 'NOT_PENDING', status: 409, state: 'approved' } });

      // The write's idempotency record, and an operator resolution refused because nothing is unknown.
      // Operations are a person's: Omar Ops, an ops-admin of acme and globex at the stack's IdP (a token of 5 minutes, taken now).
      const ops = { ...env, GATEHOUSE_OPERATOR_TOKEN: (await tokensOf(PEOPLE.ops)).access_token };
      const key = `${run.run_id}:${proposalId}:commit`;
      const op = await gatehouse(['operations', 'show', key, '--json'], ops);
      expect(op.code, op.stderr).toBe(0);
      expect(JSON.parse(op.stdout)).toMatchObject({
        key,
        state: 'succeeded',
        tool: 'commit_address_change.v2',
        run_id: run.run_id,
        tenant: 'acme',
      });
      const opTable = await gatehouse(['operations', 'show', key], ops);
      expect(opTable.stdout).toMatch(/^state:\s+succeeded$/m);
      const resolve = await gatehouse(['operations', 'resolve', key, '--state', 'failed', '--evidence', 'ticket 42'], ops);
      expect(resolve.code).toBe(1);
      expect(resolve.stderr).toContain('409 OUTCOME_ALREADY_KNOWN');
      const nothing = await gatehouse(['operations', 'show', `${run.run_id}:p_none:commit`], ops);
      expect(nothing.code).toBe(1);
      expect(nothing.stderr).toContain('404 NOT_FOUND');
      const noResult = await gatehouse(['operations', 'resolve', key, '--state', 'succeeded', '--evidence', 'x'], ops);
      expect(noResult.code).toBe(2);
      // Trusted code's control token is no operator's: the operations commands take a person's token only.
      const asCode = await gatehouse(['operations', 'show', key], { ...ops, GATEHOUSE_OPERATOR_TOKEN: CONTROL_TOKEN });
      expect(asCode.code).toBe(1);
      expect(asCode.stderr).toContain('401 TOKEN_MALFORMED');
      const unset = await gatehouse(['operations', 'show', key], { ...ops, GATEHOUSE_OPERATOR_TOKEN: '' });
      expect(unset.code).toBe(2);
      expect(unset.stderr).toContain('GATEHOUSE_OPERATOR_TOKEN is not set');
    });

    it('rejects a pending request with a reason that reaches the agent, and needs the reason', async () => {
      const { proposalId, settled } = await pendingCommit('22 Rejected Row', 'C-1004');
      const version = await currentVersion(g, 'C-1004');
      const noReason = await gatehouse(['approvals', 'reject', proposalId], env);
      expect(noReason.code).toBe(2);
      expect(noReason.stderr).toContain('--reason is required');

      const rejected = await gatehouse(['approvals', 'reject', proposalId, '--reason', 'Customer called: keep the old address'], env);
      expect(rejected.code, rejected.stderr).toBe(0);
      expect(rejected.stdout).toBe(`${proposalId}: rejected by ${IDENTITIES.lead}\n`);
      const result = await settled;
      expect(result.ok === false && result.error.code).toBe('APPROVAL_REJECTED');
      expect(result.ok === false && result.error.message).toContain('Customer called: keep the old address');
      expect(await currentVersion(g, 'C-1004')).toBe(version);

      const listed = await gatehouse(['approvals', 'list', '--state', 'rejected', '--json'], env);
      const row = (JSON.parse(listed.stdout) as { proposal_id: string; reason: string; decided_by: string }[]).find(
        (r) => r.proposal_id === proposalId,
      );
      expect(row).toMatchObject({ reason: 'Customer called: keep the old address', decided_by: IDENTITIES.lead });
    });
  });

  describe('dlq', () => {
    it('lists a garbage command the policy service dead-lettered, replays nothing on a dry run, then replays it', async () => {
      const dlqTopic = dlqTopicOf(g.topics.commands);
      const key = `cli-garbage-${randomUUID()}`;
      const value = Buffer.from('not avro, just text');
      const producer = g.kafka.producer();
      await producer.connect();
      await producer.send({ topic: g.topics.commands, messages: [{ key, value, headers: { 'x-origin': 'cli-test' } }] });
      await producer.disconnect();
      const [dead] = await readRaw(g.kafka, dlqTopic, 1);
      expect(dead && header(dead, DLQ_HEADER.reason)).toBe('NOT_WIRE_FORMAT');
      const originOffset = dead === undefined ? '' : (header(dead, DLQ_HEADER.originOffset) ?? '');

      const table = await gatehouse(['dlq', 'list', '--topic', 'commands'], env);
      expect(table.code, table.stderr).toBe(0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ORIGIN\s+PARTITION\s+OFFSET\s+REASON\s+MESSAGE\s+SIZE\s+AGE$/);
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatch(
        new RegExp(
          `^${g.topics.commands.replaceAll('.', '\\.')}\\s+\\d+\\s+${originOffset}\\s+NOT_WIRE_FORMAT\\s+.+\\s+${value.length} B\\s+\\d+m?s$`,
        ),
      );

      const all = await gatehouse(['dlq', 'list', '--json'], env);
      expect(all.code, all.stderr).toBe(0);
      expect(JSON.parse(all.stdout)).toEqual([
        expect.objectContaining({
          dlq_topic: dlqTopic,
          origin_topic: g.topics.commands,
          origin_offset: originOffset,
          reason: 'NOT_WIRE_FORMAT',
          key,
          size: value.length,
        }),
      ]);

      const admin = g.kafka.admin();
      await admin.connect();
      const highWatermarks = async (): Promise<number> =>
        (await admin.fetchTopicOffsets(g.topics.commands)).reduce((sum, p) => sum + Number(p.high), 0);
      try {
        const before = await highWatermarks();
        const dry = await gatehouse(['dlq', 'replay', '--topic', 'commands', '--reason', 'NOT_WIRE_FORMAT', '--dry-run'], env);
        expect(dry.code, dry.stderr).toBe(0);
        expect(dry.stdout).toContain('NOT_WIRE_FORMAT');
        expect(dry.stdout).toContain(`dry run: would replay 1 record(s) from ${dlqTopic} to ${g.topics.commands}; nothing was published`);
        const otherReason = await gatehouse(['dlq', 'replay', '--topic', 'commands', '--reason', 'UNKNOWN_SCHEMA_ID', '--json'], env);
        expect(JSON.parse(otherReason.stdout)).toMatchObject({ selected: 0, replayed: 0 });
        expect(await highWatermarks()).toBe(before);

        const replay = await gatehouse(['dlq', 'replay', '--topic', 'commands', '--reason', 'NOT_WIRE_FORMAT'], env);
        expect(replay.code, replay.stderr).toBe(0);
        expect(replay.stdout).toBe(`replayed 1 record(s) from ${dlqTopic} to ${g.topics.commands}\n`);
        expect(replay.stderr).toContain(`replaying to ${g.topics.commands}: 1/1 (100%)`);
        expect(await highWatermarks()).toBe(before + 1);
      } finally {
        await admin.disconnect();
      }

      // Still garbage: decoded again, dead-lettered again, with its own headers and none of the old DLQ ones doubled.
      const records = await readRaw(g.kafka, dlqTopic, 2);
      const again = records.find((m) => header(m, DLQ_HEADER.originOffset) !== originOffset);
      expect(again?.key?.toString()).toBe(key);
      expect(again?.value?.equals(value)).toBe(true);
      expect(again && header(again, 'x-origin')).toBe('cli-test');
      expect(again && header(again, DLQ_HEADER.reason)).toBe('NOT_WIRE_FORMAT');
      expect(Array.isArray(again?.headers?.[DLQ_HEADER.originOffset])).toBe(false);
    });

    it('exits 3 when Kafka cannot be reached and 2 on an unknown topic', async () => {
      const unreachable = await gatehouse(['dlq', 'list'], { ...env, KAFKA_BROKERS: `127.0.0.1:${await closedPort()}` });
      expect(unreachable.code).toBe(3);
      expect(unreachable.stderr).toContain('cannot reach Kafka');
      const unknown = await gatehouse(['dlq', 'replay', '--topic', 'nowhere', '--dry-run'], env);
      expect(unknown.code).toBe(2);
    });
  });
});
