import { addressOf, errorResult, pendingResult } from '@gatehouse/events';
import type { ConsumedRecord, EventPublisher, OrderSigner, ToolCommand } from '@gatehouse/events';
import type { IHeaders } from 'kafkajs';
import { carriedHeaders as carryContext, traceIdOf } from '@gatehouse/telemetry';
import type { GatehouseMetrics, Logger } from '@gatehouse/telemetry';
import { decide } from './decide.js';
import type { DecideDeps } from './decide.js';

/**
 * Headers that travel from the command to every event it causes: W3C trace context, and the
 * command's `sent_at` for the end-to-end latency measured where its result is published.
 */
export function carriedHeaders(headers: IHeaders | undefined, sentAt?: number): IHeaders | undefined {
  return carryContext(headers, sentAt);
}

/** decode (done by the consumer) → check → decide → act → report, for one command. */
export function commandHandler(deps: DecideDeps, publisher: EventPublisher, logger: Logger, metrics: GatehouseMetrics, signer: OrderSigner) {
  return async (command: ToolCommand, record: ConsumedRecord): Promise<void> => {
    const started = Date.now();
    const decision = await decide(command, deps);
    const headers = carriedHeaders(record.headers, command.sent_at);
    const context = { command_id: command.command_id, run_id: command.run_id, tenant: command.tenant, tool: command.tool, trace_id: traceIdOf(record.headers) };
    if (decision.kind === 'execute') {
      // Signed: the executor runs only orders its trusted keys vouch for.
      await publisher.publish('execute', decision.order.tenant, decision.order, { ...headers, ...signer.headersFor(decision.order) });
      metrics.policyDecision(decision.order.tool, 'routed');
      logger.info({ ...context, arguments_sha256: decision.order.arguments_sha256, ms: Date.now() - started }, 'routed to execution');
      return;
    }
    if (decision.kind === 'approval') {
      // The request first: a pending answer must never exist without the request a person can act on.
      await publisher.publish('approvalsRequested', decision.request.tenant, decision.request, headers);
      const pending = pendingResult(addressOf(command), decision.pending, { argumentsSha256: decision.request.arguments_sha256 });
      await publisher.publish('results', command.run_id, pending, headers);
      metrics.policyDecision(decision.request.tool, 'approval_requested');
      logger.info({ ...context, proposal_id: decision.request.proposal_id, rule: decision.request.rule_id, arguments_sha256: decision.request.arguments_sha256 }, 'approval requested');
      return;
    }
    const result = errorResult(addressOf(command), decision.error, { argumentsSha256: decision.argumentsSha256 });
    await publisher.publish('results', command.run_id, result, headers);
    metrics.policyDecision(command.tool, 'refused', decision.error);
    metrics.resultPublished('policy', result, command.sent_at);
    logger.info(
      { ...context, code: decision.error.code, field: decision.error.field, arguments_sha256: decision.argumentsSha256 },
      'refused',
    );
  };
}
