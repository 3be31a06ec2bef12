// `node bench/dist/signing-cost.js [count]`: what signing and verifying cost per event, by kind, in
// one process (CPU time per call, 10,000 of each by default). A read call signs one order (policy
// service) and one answer (executor) and verifies each once (executor, then the agent's client).
import { canonicalArguments } from '@gatehouse/contracts';
import { EventSigner, generateSigningKey, keyRing, parseSigningKey, parseTrustedKeys, verifyOrder, verifyResult } from '@gatehouse/events';
import type { ExecutionOrder, ToolResult } from '@gatehouse/events';

const count = Number(process.argv[2] ?? 10_000);
const policy = generateSigningKey('bench-policy');
const executor = generateSigningKey('bench-executor');
const ring = keyRing({ policy: parseTrustedKeys(policy.trustedKey), executor: parseTrustedKeys(executor.trustedKey) });
const policySigner = new EventSigner(parseSigningKey(policy.signingKey));
const executorSigner = new EventSigner(parseSigningKey(executor.signingKey));
const headers = { 'gatehouse-reply-partition': '3', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };

const { canonical, sha256 } = canonicalArguments({ customer_id: 'C-1842', note: 'x'.repeat(180) });
const order: ExecutionOrder = {
  schema_version: 1, order_id: 'ord-1', command_id: 'cmd-1', run_id: 'run-1', tenant: 'acme', principal: 'agent:bench', environment: 'production',
  tool: 'get_customer.v1', effect: 'read', arguments: canonical, arguments_sha256: sha256, proposal_id: null, approval: null,
  idempotency_key: null, deadline_at: Date.now() + 60_000, issued_at: Date.now(),
};
const result: ToolResult = {
  schema_version: 1, command_id: 'cmd-1', run_id: 'run-1', tenant: 'acme', tool: 'get_customer.v1', status: 'ok', operation_id: 'op_1',
  result: JSON.stringify({ customer_id: 'C-1842', name: 'Marta', tier: 'gold', note: 'y'.repeat(180) }), error: null, pending: null,
  arguments_sha256: sha256, completed_at: Date.now(), duration_ms: 3,
};

/** CPU microseconds per call of `step`, after a warm-up of a tenth as many. */
function cost(step: () => unknown): number {
  for (let i = 0; i < count / 10; i += 1) step();
  const start = process.cpuUsage();
  for (let i = 0; i < count; i += 1) step();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
}

const orderHeaders = { ...headers, ...policySigner.headersFor('execute', order, headers) };
const resultHeaders = { ...headers, ...executorSigner.headersFor('results', result, headers) };
const rows = {
  'sign an order': cost(() => policySigner.headersFor('execute', order, headers)),
  'verify an order': cost(() => verifyOrder(order, orderHeaders, ring)),
  'sign a result': cost(() => executorSigner.headersFor('results', result, headers)),
  'verify a result': cost(() => verifyResult(result, resultHeaders, ring)),
};
for (const [what, us] of Object.entries(rows)) process.stdout.write(`${what.padEnd(16)} ${us.toFixed(1)} µs CPU\n`);
const perCall = Object.values(rows).reduce((a, b) => a + b, 0);
process.stdout.write(`per read call (all four) ${perCall.toFixed(1)} µs; of which the answer's ${(rows['sign a result'] + rows['verify a result']).toFixed(1)} µs\n`);
