/** Why a tool pack cannot be used: its shape, or the configuration it was given. */
export const PackErrorCode = {
  /** The pack's shape, tools, roles or policy table. */
  PACK_INVALID: 'PACK_INVALID',
  /** A variable of the pack's `config`, as read from the environment. */
  PACK_CONFIG_INVALID: 'PACK_CONFIG_INVALID',
} as const;
export type PackErrorCode = keyof typeof PackErrorCode;

/** A tool pack that cannot be loaded. `problems` lists every problem found, each naming what is wrong. */
export class PackError extends Error {
  readonly code: PackErrorCode;
  readonly retryable = false as const;
  readonly pack: string;
  readonly problems: readonly string[];

  constructor(code: PackErrorCode, pack: string, problems: readonly string[], options?: ErrorOptions) {
    const what = code === 'PACK_CONFIG_INVALID' ? 'configuration' : 'definition';
    super(
      `Tool pack ${pack}: ${what} is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems.map((p) => `- ${p}`).join('\n'),
      options,
    );
    this.name = 'PackError';
    this.code = code;
    this.pack = pack;
    this.problems = Object.freeze([...problems]);
  }
}
