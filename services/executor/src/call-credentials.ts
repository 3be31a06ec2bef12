import { canonicalJson, isExchangedCredential, sha256Hex, toolError, ToolFailure } from '@gatehouse/contracts';
import type { CredentialRequest, ExchangedCredential, ToolImplementation } from '@gatehouse/contracts';
import type { ExecutionOrder } from '@gatehouse/events';
import { HTTP_METHOD, requestMethod, requestTarget } from '@gatehouse/identity';
import type { CallAssertionSigner, CallKind, TokenExchanger } from '@gatehouse/identity';
import type { GatehouseMetrics } from '@gatehouse/telemetry';

/**
 * How long past the handler's own timeout an assertion stays valid: room for the clocks of the
 * executor and the system of record to disagree a little, never for a second request.
 */
const ASSERTION_MARGIN_MS = 5_000;

/**
 * The longest an assertion lives before its margin: it is asked for per request and checked when
 * the request arrives, so a handler with a long timeout asks again rather than holding one.
 */
const ASSERTION_LIFETIME_MS = 60_000;

/** A handler's `credential(request)`: one fresh credential per ask. */
export type Credential = (request?: CredentialRequest) => Promise<string>;

/**
 * The method and target an assertion names, from the request the handler asks it for: without one,
 * an assertion would do for any request to its system of record, so none is minted.
 */
function boundRequest(address: string, request: CredentialRequest | undefined): { method: string; target: string } {
  const refused = (why: string): ToolFailure =>
    new ToolFailure(toolError('CREDENTIAL_REFUSED', `${address} asked for a call assertion ${why}; nothing was sent`));
  if (request === undefined) throw refused('without naming its request (credential({ method, url }), as authorizedFetch asks)');
  if (!HTTP_METHOD.test(request.method)) throw refused('for a method that is not an HTTP method');
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    throw refused('for a URL that is not absolute');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused(`for a ${url.protocol} URL`);
  return { method: requestMethod(request.method), target: requestTarget(url) };
}

/**
 * The credentials an executor gives the handlers it runs: a call assertion minted on each ask,
 * naming exactly the call the executor is running — its principal and person, tenant, run and
 * tool, the hash of the arguments the handler holds and, for a write, its key and approval — and
 * the one request the handler asks it for (method, path and query: known only then); or,
 * for a tool whose credential is `{ exchange }`, the IdP's token for the run's person.
 */
export class CallCredentials {
  constructor(
    private readonly signer: CallAssertionSigner,
    private readonly executorId: string,
    /** The time assertions are minted by (Redis' clock): their lifetime means the same to the system of record. */
    private readonly clock: { now(): number },
    private readonly metrics?: GatehouseMetrics,
    private readonly exchanger?: TokenExchanger,
  ) {}

  /**
   * The IdP's token for the run's person and the tool's audience: the same token for every ask while
   * it lives (the exchanger caches it). A run with no person's token, or whose person's session has
   * ended, gets CREDENTIAL_REFUSED; an IdP that cannot be asked, UPSTREAM_ERROR (retryable: nothing
   * was sent, and asking again can succeed).
   */
  private exchanged(order: ExecutionOrder, address: string, declared: ExchangedCredential): Credential {
    const target = { audience: declared.exchange.audience, scope: declared.exchange.scope ?? null };
    return async () => {
      if (this.exchanger === undefined)
        throw new ToolFailure(
          toolError('CREDENTIAL_REFUSED', `${address} needs a token exchanged at the IdP, and this executor has no exchange configured`),
        );
      const outcome = await this.exchanger.tokenFor(order.run_id, target);
      if (outcome.ok) {
        // The token must be the run's person's: a person's token stored under another's run (by
        // whoever can write Redis and seal to the executors' public keys) never speaks for that run.
        const person = order.on_behalf_of ?? null;
        if (person !== null && outcome.names?.issuer === person.issuer && outcome.names.subject === person.subject) return outcome.token;
        throw new ToolFailure(
          toolError(
            'CREDENTIAL_REFUSED',
            person === null
              ? `${address} needs the token of the run's person, and the run names no person; nothing was sent`
              : `the identity provider's token for ${address} does not name the run's person; nothing was sent`,
          ),
        );
      }
      if (outcome.reason === 'unreachable') {
        throw new ToolFailure(
          toolError('UPSTREAM_ERROR', `the identity provider could not be asked for ${address}'s token; nothing was sent`, {
            retryable: true,
          }),
        );
      }
      throw new ToolFailure(
        toolError(
          'CREDENTIAL_REFUSED',
          `the identity provider refused a token for ${address} on behalf of the run's person (${outcome.detail}); nothing was sent`,
        ),
      );
    };
  }

  /** A read's credential: the order's arguments are the handler's. */
  forRead(order: ExecutionOrder, implementation: ToolImplementation): Credential {
    return this.credential(order, implementation, 'read', order.arguments_sha256);
  }

  /** A write's credential, for the arguments it runs with (the approved proposal's, for a commit). */
  forWrite(order: ExecutionOrder, implementation: ToolImplementation, args: unknown): Credential {
    return this.credential(order, implementation, 'write', sha256Hex(canonicalJson(args)));
  }

  /** The credential of a write's status query: it names the key, not the arguments. */
  forStatus(order: ExecutionOrder, implementation: ToolImplementation): Credential {
    return this.credential(order, implementation, 'status', null);
  }

  private credential(
    order: ExecutionOrder,
    implementation: ToolImplementation,
    call: CallKind,
    argumentsSha256: string | null,
  ): Credential {
    const tool = implementation.contract;
    const declared = implementation.credential;
    if (isExchangedCredential(declared)) return this.exchanged(order, tool.address, declared);
    const audience = declared?.audience;
    return async (request) => {
      if (audience === undefined) {
        throw new ToolFailure(
          toolError(
            'CREDENTIAL_REFUSED',
            `${tool.address} declares no audience for its system of record (credential.audience, or the pack's credential)`,
          ),
        );
      }
      const { method, target } = boundRequest(tool.address, request);
      const now = this.clock.now();
      let expiresAt = now + Math.min(tool.timeoutMs, ASSERTION_LIFETIME_MS) + ASSERTION_MARGIN_MS;
      // A status query settles what already happened: it outlives the call's deadline. A call does not.
      if (call !== 'status' && order.deadline_at !== null) expiresAt = Math.min(expiresAt, order.deadline_at);
      if (expiresAt - now < 1_000) {
        throw new ToolFailure(toolError('TIMEOUT', `the deadline of ${tool.address} has passed; nothing was sent`, { retryable: false }));
      }
      const write = call === 'write';
      const token = await this.signer.mint(
        {
          audience,
          call,
          method,
          target,
          principal: order.principal,
          actor: this.executorId,
          tenant: order.tenant,
          runId: order.run_id,
          commandId: order.command_id,
          tool: tool.address,
          onBehalfOf: order.on_behalf_of ?? null,
          argumentsSha256,
          idempotencyKey: call === 'read' ? null : order.idempotency_key,
          proposalId: write ? order.proposal_id : null,
          approvalId: write ? (order.approval?.approval_id ?? null) : null,
          approver: write ? (order.approval?.approved_by ?? null) : null,
          expiresAt,
        },
        now,
      );
      this.metrics?.callAssertion(call);
      return token;
    };
  }
}
