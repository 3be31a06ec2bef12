import type { CliIo } from './io.js';
import { formatFields, formatTable } from './table.js';
import type { Column } from './table.js';

/** Reports how far a long operation got, on stderr so stdout stays the result. */
export interface Progress {
  update(done: number, total: number): void;
  /** Ends the progress display; `summary` (if any) stays as a line on stderr. */
  finish(summary?: string): void;
}

const LINE_EVERY_MS = 1_000;

/** What a command prints: tables and fields for people, JSON for scripts (--json), notes on stderr. */
export class Output {
  constructor(
    private readonly io: CliIo,
    readonly json: boolean,
  ) {}

  /** `value` as JSON with --json, else what `render` makes of it. */
  result(value: unknown, render: () => string): void {
    this.io.stdout.write(this.json ? `${JSON.stringify(value, null, 2)}\n` : render());
  }

  /** Text that is the result itself (an export), printed as is with or without --json. */
  raw(text: string): void {
    this.io.stdout.write(text);
  }

  table<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string {
    return formatTable(columns, rows);
  }

  fields(fields: readonly (readonly [string, string])[]): string {
    return formatFields(fields);
  }

  /** A remark for the person at the terminal (warnings, hints); never part of the result. */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }

  progress(label: string): Progress {
    const { stderr, now } = { stderr: this.io.stderr, now: this.io.now };
    const tty = stderr.isTTY === true;
    let lastLineAt = Number.NEGATIVE_INFINITY;
    let shown = false;
    return {
      update(done, total) {
        const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
        const text = `${label}: ${done}/${total} (${percent}%)`;
        if (tty) {
          stderr.write(`\r${text}\u001b[K`);
          shown = true;
          return;
        }
        // Not a terminal (a log, a pipe): a line now and then, and always the last one.
        const at = now();
        if (done === total || at - lastLineAt >= LINE_EVERY_MS) {
          stderr.write(`${text}\n`);
          lastLineAt = at;
        }
      },
      finish(summary) {
        if (tty && shown) stderr.write('\r\u001b[K');
        if (summary !== undefined) stderr.write(`${summary}\n`);
      },
    };
  }
}
