import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { cliManifest } from '../cli-manifest.js';
import type { CommandGroup } from '../command.js';
import { CliError, ExitCode, usageError } from '../exit-code.js';
import { asPathSpecifier, chosenDocuments, POLICY_TABLE_OPTION, ROLES_FILE_OPTION } from '../pack-choice.js';
import type { CheckRow, PackCheckReport } from '../pack-check.js';
import type { Column } from '../table.js';
import { formatTable } from '../table.js';

/** The report as scripts read it (--json): every check with every problem; the snapshot goes to stdout only with --snapshot. */
function reportJson(report: PackCheckReport): object {
  return { pack: report.pack, name: report.name, ok: report.ok, checks: report.checks };
}

const COLUMNS: readonly Column<CheckRow>[] = [
  { header: 'CHECK', cell: (row) => row.check },
  { header: 'RESULT', cell: (row) => (row.result === 'failed' ? 'FAILED' : row.result) },
  { header: 'COUNT', cell: (row) => (row.count === null ? '-' : String(row.count)), right: true },
  // Every problem is listed on stderr; the table shows the first, cut.
  { header: 'DETAIL', cell: (row) => row.detail, max: 140 },
];

function reportText(report: PackCheckReport): string {
  const failed = report.checks.filter((row) => row.result === 'failed').length;
  const who = report.name ?? report.pack;
  const summary =
    failed === 0 ? `${who}: all ${report.checks.length} checks passed` : `${who}: ${failed} of ${report.checks.length} checks failed`;
  return `${formatTable(COLUMNS, report.checks)}${summary}\n`;
}

/** A failed check run: the loader's message when the pack did not load, else every problem of every failed check. */
function checkFailure(report: PackCheckReport): CliError {
  const failed = report.checks.filter((row) => row.result === 'failed');
  const details = { failed: failed.map((row) => row.check), problems: failed.flatMap((row) => row.problems) };
  const load = failed.find((row) => row.check === 'load');
  if (load !== undefined) return new CliError(ExitCode.refused, 'PACK_LOAD_FAILED', load.problems.join('\n'), { details });
  const lines = failed.flatMap((row) => row.problems.map((problem) => `- ${row.check}: ${problem}`));
  const checks = `${failed.length} check${failed.length === 1 ? '' : 's'}`;
  return new CliError(
    ExitCode.refused,
    'PACK_CHECK_FAILED',
    `tool pack ${report.name ?? report.pack} failed ${checks} (${details.failed.join(', ')}):\n${lines.join('\n')}`,
    { details },
  );
}

function pinnedSnapshot(file: string | undefined): { file: string; text: string } | undefined {
  if (file === undefined) return undefined;
  try {
    return { file, text: readFileSync(file, 'utf8') };
  } catch (cause) {
    throw usageError(`cannot read the snapshot ${file}: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** The directory `pack init` writes into: new, or empty. */
function emptyDirectory(dir: string): string {
  const path = resolve(process.cwd(), dir);
  if (!existsSync(path)) return path;
  if (!statSync(path).isDirectory()) throw usageError(`${dir} is a file; pack init makes a new directory`);
  if (readdirSync(path).length > 0) throw usageError(`${dir} is not empty; pack init writes only into a new or empty directory`);
  return path;
}

export const pack: CommandGroup = {
  name: 'pack',
  summary: 'a tool pack’s contract checks, without any server, and a new pack to start from',
  subcommands: [
    {
      name: 'check',
      summary:
        'load and host a pack as the services do, then lint, snapshot and run the generated contract cases (exit 1 when a check fails)',
      positionals: ['pack'],
      options: {
        'roles-file': ROLES_FILE_OPTION,
        'policy-table': POLICY_TABLE_OPTION,
        snapshot: { type: 'boolean', description: 'print the per-role snapshot on stdout (the report then goes to stderr)' },
        'snapshot-file': {
          type: 'string',
          value: 'path',
          description: 'a checked-in per-role snapshot the pack’s must equal; each difference is named',
        },
      },
      notes: [
        '<pack> is a package name or a path (a package directory or a module), with #<export> to pick one of several packs: @acme/billing-tools, ./packs/billing, ./index.mjs#billingPack.',
        'Checks: load · shape (name, variables, documents) · config (the pack’s variables as this environment sets them) · tools (setup ran, one implementation per address) ·',
        'schema lint (the catalog loads: closed objects, discriminated unions, pairs, compiled schemas) · roles · policy table (checked against the catalog) · snapshot ·',
        'input and proposal cases (@gatehouse/testkit: every generated invalid case refused at its field, every valid one accepted) · output schemas (closed, compiled, cases).',
        'The pack’s setup runs once, as a service runs it (it should only build clients); no handler runs, and the CLI contacts nothing.',
      ],
      async run({ arg, options, io, out, json }) {
        const pinned = pinnedSnapshot(options.string('snapshot-file'));
        const overrides = chosenDocuments(options, io.env);
        // Loaded on demand: the runtime, the testkit and the pack are the slow part of start-up.
        const { checkPack } = await import('../pack-check.js');
        const report = await checkPack({ pack: arg('pack'), env: io.env, overrides, pinnedSnapshot: pinned });
        if (options.flag('snapshot')) {
          io.stderr.write(json ? `${JSON.stringify(reportJson(report), null, 2)}\n` : reportText(report));
          if (report.snapshot !== null) out.raw(report.snapshot);
        } else {
          out.result(reportJson(report), () => reportText(report));
        }
        if (!report.ok) throw checkFailure(report);
      },
    },
    {
      name: 'init',
      summary:
        'scaffold a new pack directory that passes pack check: one read tool, one preview/commit pair that needs approval, roles, policy table, README',
      positionals: ['dir'],
      options: {
        name: {
          type: 'string',
          value: 'name',
          description: 'the pack’s name, lower-case words joined by - (default: from the directory’s name)',
        },
      },
      notes: [
        'The pack is plain ES modules with JSDoc types (// @ts-check): no build step, so gatehouse pack check <dir> passes right away once @gatehouse/sdk resolves from <dir>.',
        'Refuses a directory that is not empty (exit 2). The README in it lists the next steps.',
      ],
      async run({ arg, options, out }) {
        const dir = emptyDirectory(arg('dir'));
        const { packNameOf, packScaffold, schemaDirFor } = await import('../pack-scaffold.js');
        const { PACK_NAME_PATTERN } = await import('@gatehouse/sdk');
        const name = options.string('name') ?? packNameOf(dir);
        if (name === undefined) throw usageError(`cannot make a pack name of "${basename(dir)}"; pass --name <lower-case-words>`);
        if (!PACK_NAME_PATTERN.test(name))
          throw usageError(`--name must be lower-case words joined by - (${PACK_NAME_PATTERN.source}), got "${name}"`);
        const manifest = cliManifest();
        const demoApprover = { identity: `demo-lead@${name}.example`, token: `demo-${randomBytes(16).toString('hex')}` };
        const files = packScaffold({
          name,
          sdkVersion: manifest.dependencies['@gatehouse/sdk'] ?? manifest.version,
          demoApprover,
          schemaDir: schemaDirFor(dir),
        });
        for (const file of files) {
          const path = join(dir, file.path);
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, file.text, { flag: 'wx' });
        }
        out.result({ dir, name, files: files.map((f) => f.path), demoApprover }, () =>
          [
            `created tool pack ${name} in ${dir}:`,
            ...files.map((f) => `  ${f.path}`),
            `demo approver ${demoApprover.identity} (team-lead, tenant acme), token ${demoApprover.token} — for local use only`,
            'next: install @gatehouse/sdk where the pack lives, then',
            `  gatehouse pack check ${asPathSpecifier(arg('dir'))}`,
            `(${join(arg('dir'), 'README.md')} lists the steps after that)`,
            '',
          ].join('\n'),
        );
      },
    },
  ],
};
