import { GatehouseError } from '@gatehouse/contracts';

/** One refused variable and why, e.g. `{ variable: 'POLICY_PORT', reason: 'out of range (must be 0..65535), got "70000"' }`. */
export interface Refusal {
  readonly variable: string;
  readonly reason: string;
  readonly cause?: unknown;
}

/**
 * Thrown once at start-up, naming every refused variable. Retrying cannot help: the environment
 * must change. Callers branch on `code`.
 */
export class ConfigError extends GatehouseError<'CONFIG_INVALID'> {
  readonly refusals: readonly Refusal[];

  constructor(refusals: readonly Refusal[]) {
    const causes = refusals.filter((r) => r.cause !== undefined).map((r) => r.cause);
    const list = refusals.map((r) => `${r.variable}: ${r.reason}`).join('; ');
    const message = `invalid configuration (${refusals.length} ${refusals.length === 1 ? 'variable' : 'variables'} refused): ${list}`;
    super('CONFIG_INVALID', message, {
      cause: causes.length === 0 ? undefined : causes.length === 1 ? causes[0] : new AggregateError(causes),
    });
    this.refusals = refusals;
  }
}
