import { readFileSync, writeFileSync } from 'node:fs';
import type { CommandGroup } from '../command.js';
import { CliError, ExitCode, usageError } from '../exit-code.js';
import { kafkaAccess } from '../kafka-access.js';

/** The reference catalog and, when it can be loaded, the policy table: what a replay is judged against. */
async function currentCatalog() {
  const { referenceCatalog } = await import('@gatehouse/reference-tools');
  return referenceCatalog();
}

export const trace: CommandGroup = {
  name: 'trace',
  summary: 'record a redacted trace of a run, and replay it against the current catalog after a schema change',
  subcommands: [
    {
      name: 'record',
      summary: 'read a run’s commands, decisions, approvals and results from Kafka into a redacted trace file',
      positionals: ['run_id'],
      options: {
        out: { type: 'string', value: 'file', required: true, description: 'where to write the trace (JSON)' },
        'max-wait': { type: 'string', value: 'ms', description: 'bound on reading the topics (default 60000)' },
      },
      notes: [
        'Free-text argument values are replaced by same-length placeholders and results are reduced to status, code and field names: the file is safe to keep in a test suite.',
      ],
      async run({ arg, options, out, io }) {
        const file = options.required('out');
        const { recordTrace, traceJson } = await import('@gatehouse/trace');
        const { EventSerde, eventsConfigFromEnv } = await import('@gatehouse/events');
        const access = kafkaAccess(io.env, io.stderr);
        await access.probe();
        const config = eventsConfigFromEnv(io.env);
        const serde = new EventSerde({ registryUrl: config.registryUrl, topics: access.topics });
        const maxWait = options.string('max-wait');
        const maxMs = maxWait === undefined ? 60_000 : Number(maxWait);
        if (!Number.isSafeInteger(maxMs) || maxMs < 1) throw usageError('--max-wait must be a positive number of milliseconds');
        io.stderr.write(`recording run ${arg('run_id')} from ${access.brokers}…\n`);
        let recorded;
        try {
          recorded = await recordTrace({ kafka: access.kafka, serde, topics: access.topics, runId: arg('run_id'), catalog: await currentCatalog(), until: { maxMs } });
        } catch (cause) {
          const code = (cause as { code?: string }).code ?? 'RECORD_FAILED';
          throw new CliError(code === 'RUN_NOT_FOUND' ? ExitCode.refused : ExitCode.unreachable, code, cause instanceof Error ? cause.message : String(cause), { cause });
        }
        writeFileSync(file, traceJson(recorded));
        out.result({ file, run_id: recorded.run.run_id, calls: recorded.calls.length }, () => `recorded ${recorded.calls.length} calls of ${recorded.run.run_id} → ${file}\n`);
      },
    },
    {
      name: 'replay',
      summary: 'replay a trace against the current catalog (sandbox: nothing executes) and report changed effects and invariants',
      positionals: ['file'],
      notes: ['Exits 1 when an allowed effect changed or an invariant broke; the report lists each call before and after.'],
      async run({ arg, out }) {
        const { formatReport, parseTrace, replayTrace } = await import('@gatehouse/trace');
        let text: string;
        try {
          text = readFileSync(arg('file'), 'utf8');
        } catch (cause) {
          throw usageError(`cannot read ${arg('file')}: ${cause instanceof Error ? cause.message : String(cause)}`);
        }
        const report = replayTrace(parseTrace(text), await currentCatalog());
        out.result(report, () => formatReport(report));
        if (report.differences > 0 || report.invariants.some((i) => !i.holds)) {
          throw new CliError(ExitCode.refused, 'REPLAY_DIFFERS', `${report.differences} calls changed; see the report`);
        }
      },
    },
  ],
};
