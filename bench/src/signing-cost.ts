// `node bench/dist/signing-cost.js [count]`: what signing and verifying cost per event, by kind, in
// one process (CPU time per call, 10,000 of each by default). A read call proves its command (the
// agent's client; the policy service checks it), signs one order (policy service) and one answer
// (executor) and verifies each once (executor, then the agent's client).
// Under load a publisher signs what it sends together once (MAX_BATCH_LEAVES events per signature),
// and a reader verifies that signature once per batch: the batch rows give the cost per event then.
import { canonicalArguments } from '@gatehouse/contracts';
import {
  EventSigner,
  generateSigningKey,
  keyRing,
  MAX_BATCH_LEAVES,
  parseSigningKey,
  parseTrustedKeys,
  payloadFor,
  RunKey,
  runPublicKey,
  verifyCommandProof,
  verifyOrder,
  verifyResult,
} from '@gatehouse/events';
import type { ExecutionOrder, ToolCommand, ToolResult } from '@gatehouse/events';

const count = Number(process.argv[2] ?? 10_000);
const policy = generateSigningKey('bench-policy');
const executor = generateSigningKey('bench-executor');
const ring = keyRing({ policy: parseTrustedKeys(policy.trustedKey), executor: parseTrustedKeys(executor.trustedKey) });
const policySigner = new EventSigner(parseSigningKey(policy.signingKey));
const executorSigner = new EventSigner(parseSigningKey(executor.signingKey));
const headers = { 'gatehouse-reply-partition': '3', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };

const { canonical, sha256 } = canonicalArguments({ customer_id: 'C-1842', note: 'x'.repeat(180) });
const order: ExecutionOrder = {
  schema_version: 1,
  order_id: 'ord-1',
  command_id: 'cmd-1',
  run_id: 'run-1',
  tenant: 'acme',
  principal: 'agent:bench',
  environment: 'production',
  tool: 'get_customer.v1',
  effect: 'read',
  arguments: canonical,
  arguments_sha256: sha256,
  proposal_id: null,
  approval: null,
  idempotency_key: null,
  deadline_at: Date.now() + 60_000,
  issued_at: Date.now(),
};
const result: ToolResult = {
  schema_version: 1,
  command_id: 'cmd-1',
  run_id: 'run-1',
  tenant: 'acme',
  tool: 'get_customer.v1',
  status: 'ok',
  operation_id: 'op_1',
  result: JSON.stringify({ customer_id: 'C-1842', name: 'Marta', tier: 'gold', note: 'y'.repeat(180) }),
  error: null,
  pending: null,
  arguments_sha256: sha256,
  completed_at: Date.now(),
  duration_ms: 3,
};

// The command a read call starts with, proved with its run's key (the agent's client) and checked
// against the run record's public half (the policy service).
const runKey = RunKey.generate();
const runPublic = runPublicKey(runKey.publicKey());
const command: ToolCommand = {
  schema_version: 1,
  command_id: 'cmd-1',
  run_id: 'run-1',
  tenant: 'acme',
  tool: 'get_customer.v1',
  arguments: canonical,
  sent_at: Date.now(),
  deadline_at: Date.now() + 60_000,
};
const noFrontDoors = new Map();

/** CPU microseconds per call of `step`, after a warm-up of a tenth as many. */
function cost(step: () => unknown): number {
  for (let i = 0; i < count / 10; i += 1) step();
  const start = process.cpuUsage();
  for (let i = 0; i < count; i += 1) step();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
}

/** CPU microseconds per event of `step`, run once over `events` events. */
function costOnce(events: number, step: () => unknown): number {
  const start = process.cpuUsage();
  step();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / events;
}

// Distinct batches of distinct orders and results, as a busy policy service and executor send them.
const batches = Math.max(1, Math.floor(count / MAX_BATCH_LEAVES));
const batchOrders = Array.from({ length: batches * MAX_BATCH_LEAVES }, (_, i) => ({
  ...order,
  order_id: `ord-${i}`,
  command_id: `cmd-${i}`,
}));
const batchResults = Array.from({ length: batches * MAX_BATCH_LEAVES }, (_, i) => ({ ...result, command_id: `cmd-${i}` }));
const inBatches = <T>(items: readonly T[]): T[][] =>
  Array.from({ length: batches }, (_, b) => items.slice(b * MAX_BATCH_LEAVES, (b + 1) * MAX_BATCH_LEAVES));
let orderBatchHeaders: Record<string, string>[] = [];
let resultBatchHeaders: Record<string, string>[] = [];
const signBatchOfOrders = costOnce(batchOrders.length, () => {
  orderBatchHeaders = inBatches(batchOrders).flatMap((group) =>
    policySigner.headersForBatch(group.map((o) => payloadFor('execute', o, headers) as Buffer)).map((h) => ({ ...headers, ...h })),
  );
});
const signBatchOfResults = costOnce(batchResults.length, () => {
  resultBatchHeaders = inBatches(batchResults).flatMap((group) =>
    executorSigner.headersForBatch(group.map((r) => payloadFor('results', r, headers) as Buffer)).map((h) => ({ ...headers, ...h })),
  );
});
const verifyBatchOfOrders = costOnce(
  batchOrders.length,
  () => batchOrders.every((o, i) => verifyOrder(o, orderBatchHeaders[i], ring).ok) || process.exit(1),
);
const verifyBatchOfResults = costOnce(
  batchResults.length,
  () => batchResults.every((r, i) => verifyResult(r, resultBatchHeaders[i], ring).ok) || process.exit(1),
);

const orderHeaders = { ...headers, ...policySigner.headersFor('execute', order, headers) };
const resultHeaders = { ...headers, ...executorSigner.headersFor('results', result, headers) };
const commandHeaders = { ...headers, ...runKey.prove(command, 3) };
const rows = {
  'prove a command': cost(() => runKey.prove(command, 3)),
  'check a command proof': cost(() => verifyCommandProof(command, commandHeaders, runPublic, noFrontDoors)),
  'sign an order': cost(() => policySigner.headersFor('execute', order, headers)),
  'verify an order': cost(() => verifyOrder(order, orderHeaders, ring)),
  'sign a result': cost(() => executorSigner.headersFor('results', result, headers)),
  'verify a result': cost(() => verifyResult(result, resultHeaders, ring)),
};
const batchRows = {
  [`sign an order, ${MAX_BATCH_LEAVES} a batch`]: signBatchOfOrders,
  [`verify an order, ${MAX_BATCH_LEAVES} a batch`]: verifyBatchOfOrders,
  [`sign a result, ${MAX_BATCH_LEAVES} a batch`]: signBatchOfResults,
  [`verify a result, ${MAX_BATCH_LEAVES} a batch`]: verifyBatchOfResults,
};
for (const [what, us] of Object.entries(rows)) process.stdout.write(`${what.padEnd(30)} ${us.toFixed(1)} µs CPU\n`);
for (const [what, us] of Object.entries(batchRows)) process.stdout.write(`${what.padEnd(30)} ${us.toFixed(1)} µs CPU\n`);
const perCall = Object.values(rows).reduce((a, b) => a + b, 0);
process.stdout.write(
  `per read call (all six) ${perCall.toFixed(1)} µs; of which the command's proof ${(rows['prove a command'] + rows['check a command proof']).toFixed(1)} µs, the answer's ${(rows['sign a result'] + rows['verify a result']).toFixed(1)} µs\n`,
);
