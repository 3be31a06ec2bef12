import type { CliIo } from './io.js';
import type { Output } from './output.js';

/** One option of a subcommand, as `util.parseArgs` takes it, plus what help shows. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  /** The placeholder in help: `--tenant <tenant>`. */
  readonly value?: string;
  readonly description: string;
  readonly required?: boolean;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** Parsed options of one invocation, read by name; missing required values are usage errors. */
export interface Options {
  string(name: string): string | undefined;
  required(name: string): string;
  flag(name: string): boolean;
  list(name: string): readonly string[];
}

export interface CommandContext {
  readonly io: CliIo;
  /** `--json`: print JSON for scripts instead of tables. */
  readonly json: boolean;
  /** A positional argument by its name in `Subcommand.positionals`. */
  readonly arg: (name: string) => string;
  readonly options: Options;
  readonly out: Output;
}

export interface Subcommand {
  readonly name: string;
  readonly summary: string;
  /** Positional arguments, in order, all required: `['proposal_id']`. */
  readonly positionals?: readonly string[];
  readonly options?: OptionSpecs;
  /** More lines for `--help`: defaults, examples, what the output holds. */
  readonly notes?: readonly string[];
  /** Take any options and arguments without checking them (a placeholder that explains itself). */
  readonly anyArguments?: boolean;
  run(context: CommandContext): Promise<void>;
}

/** A top-level command (`runs`, `dlq`…): one file in commands/, listed once in commands.ts. */
export interface CommandGroup {
  readonly name: string;
  readonly summary: string;
  readonly subcommands: readonly Subcommand[];
}
