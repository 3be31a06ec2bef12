import { GatehouseError } from '@gatehouse/contracts';

/**
 * Why a tool pack cannot be used (see the one catalogue, `ERRORS`): its shape, tools, roles or
 * policy table (`PACK_INVALID`), or a variable of its `config` as read from the environment
 * (`PACK_CONFIG_INVALID`).
 */
export type PackErrorCode = 'PACK_INVALID' | 'PACK_CONFIG_INVALID';

/** A tool pack that cannot be loaded. `problems` lists every problem found, each naming what is wrong. */
export class PackError extends GatehouseError<PackErrorCode> {
  readonly pack: string;
  readonly problems: readonly string[];

  constructor(code: PackErrorCode, pack: string, problems: readonly string[], options?: ErrorOptions) {
    const what = code === 'PACK_CONFIG_INVALID' ? 'configuration' : 'definition';
    super(
      code,
      `Tool pack ${pack}: ${what} is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems.map((p) => `- ${p}`).join('\n'),
      { cause: options?.cause },
    );
    this.pack = pack;
    this.problems = Object.freeze([...problems]);
  }
}
