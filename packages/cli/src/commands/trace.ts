import { readFileSync, writeFileSync } from 'node:fs';
import type { HostedPack } from '@gatehouse/runtime';
import type { CommandContext, CommandGroup } from '../command.js';
import { CliError, ExitCode, usageError } from '../exit-code.js';
import { hostedPack } from '../host-pack.js';
import { kafkaAccess } from '../kafka-access.js';
import { chosenDocuments, chosenPack, PACK_OPTION, POLICY_TABLE_OPTION } from '../pack-choice.js';

/** The environment of writes whose trace names none, as packages/trace/test/checked-in-traces.test.ts replays them. */
const DEFAULT_ENVIRONMENT = 'production';

/**
 * The pack a trace is recorded and replayed against, hosted: its catalog, and its policy table (or
 * the one `--policy-table` names) checked against the catalog as the policy service checks it.
 */
function hostChosen({ options, io }: CommandContext): Promise<HostedPack> {
  return hostedPack(chosenPack(options, io.env), io.env, chosenDocuments(options, io.env));
}

/** The keys a recorded trace is checked against: every role's, since each signs some of what a run causes. */
async function traceKeys(env: Readonly<Record<string, string | undefined>>) {
  const { KEY_ROLES, keyRingFromEnv } = await import('@gatehouse/events');
  try {
    return keyRingFromEnv(env, KEY_ROLES, 'a trace leaves out every record no key of the right service signed');
  } catch (cause) {
    throw usageError(cause instanceof Error ? cause.message : String(cause));
  }
}

export const trace: CommandGroup = {
  name: 'trace',
  summary: 'record a redacted trace of a run, and replay it against a tool pack’s current catalog after a schema change',
  subcommands: [
    {
      name: 'record',
      summary: 'read a run’s commands, decisions, approvals and results from Kafka into a redacted trace file',
      positionals: ['run_id'],
      options: {
        out: { type: 'string', value: 'file', required: true, description: 'where to write the trace (JSON)' },
        'max-wait': { type: 'string', value: 'ms', description: 'bound on reading the topics (default 60000)' },
        pack: PACK_OPTION,
      },
      notes: [
        'Free-text argument values are replaced by same-length placeholders and results are reduced to status, code and field names: the file is safe to keep in a test suite.',
        'Only orders, approval requests, decisions and results a key of the service that issues them signed are kept: set GATEHOUSE_POLICY_KEYS, GATEHOUSE_APPROVAL_KEYS and GATEHOUSE_EXECUTOR_KEYS.',
      ],
      async run(context) {
        const { arg, options, out, io } = context;
        const file = options.required('out');
        const maxWait = options.string('max-wait');
        const maxMs = maxWait === undefined ? 60_000 : Number(maxWait);
        if (!Number.isSafeInteger(maxMs) || maxMs < 1) throw usageError('--max-wait must be a positive number of milliseconds');
        // The pack first: a missing or broken pack is reported before anything is contacted.
        const { catalog } = await hostChosen(context);
        const { recordTrace, traceJson } = await import('@gatehouse/trace');
        const { EventSerde } = await import('@gatehouse/events');
        // Before anything is contacted: a trace of what no one can vouch for is refused, not recorded.
        const keys = await traceKeys(io.env);
        const access = kafkaAccess(io.env);
        await access.probe();
        const serde = new EventSerde({ registryUrl: access.registryUrl, topics: access.topics });
        io.stderr.write(`recording run ${arg('run_id')} from ${access.brokers}…\n`);
        let recorded;
        try {
          recorded = await recordTrace({
            kafka: access.kafka,
            serde,
            topics: access.topics,
            runId: arg('run_id'),
            catalog,
            until: { maxMs },
            keys,
          });
        } catch (cause) {
          const code = (cause as { code?: string }).code ?? 'RECORD_FAILED';
          throw new CliError(
            code === 'RUN_NOT_FOUND' ? ExitCode.refused : ExitCode.unreachable,
            code,
            cause instanceof Error ? cause.message : String(cause),
            { cause },
          );
        }
        writeFileSync(file, traceJson(recorded));
        out.result(
          { file, run_id: recorded.run.run_id, calls: recorded.calls.length },
          () => `recorded ${recorded.calls.length} calls of ${recorded.run.run_id} → ${file}\n`,
        );
      },
    },
    {
      name: 'replay',
      summary:
        'replay a trace against a pack’s current catalog and policy table (sandbox: nothing executes) and report changed effects and invariants',
      positionals: ['file'],
      options: {
        pack: PACK_OPTION,
        'policy-table': POLICY_TABLE_OPTION,
        environment: {
          type: 'string',
          value: 'env',
          description: `environment of writes whose trace names none (default ${DEFAULT_ENVIRONMENT})`,
        },
      },
      notes: [
        'Exits 1 when an allowed effect changed or an invariant broke; the report lists each call before and after.',
        'Writes are decided again by the policy table (the pack’s own unless --policy-table or GATEHOUSE_POLICY_TABLE_FILE names another); run-level, grant, rate-limit and proposal-state refusals are carried over from the recording.',
      ],
      async run(context) {
        const { arg, options, out } = context;
        const { formatReport, parseTrace, replayTrace } = await import('@gatehouse/trace');
        let text: string;
        try {
          text = readFileSync(arg('file'), 'utf8');
        } catch (cause) {
          throw usageError(`cannot read ${arg('file')}: ${cause instanceof Error ? cause.message : String(cause)}`);
        }
        const recorded = parseTrace(text);
        const { catalog, policyTable } = await hostChosen(context);
        const report = replayTrace(recorded, catalog, {
          policyTable,
          environment: options.string('environment') ?? DEFAULT_ENVIRONMENT,
        });
        out.result(report, () => formatReport(report));
        if (report.differences > 0 || report.invariants.some((i) => !i.holds)) {
          throw new CliError(ExitCode.refused, 'REPLAY_DIFFERS', `${report.differences} calls changed; see the report`);
        }
      },
    },
  ],
};
