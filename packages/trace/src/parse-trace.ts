import { TraceError } from './trace-error.js';
import { DecisionStatus, TRACE_FORMAT, TraceResultStatus } from './trace-format.js';
import type { Trace } from './trace-format.js';

type Doc = Readonly<Record<string, unknown>>;

const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const optional = (v: unknown, check: (v: unknown) => boolean): boolean => v === undefined || check(v);

function toolProblems(t: unknown, at: string): string[] {
  if (!isDoc(t)) return [`${at} is not an object`];
  const ok =
    isString(t['address']) &&
    (t['effect'] === 'read' || t['effect'] === 'write') &&
    (t['approval'] === null || isString(t['approval'])) &&
    typeof t['retired'] === 'boolean' &&
    isString(t['input_sha256']);
  return ok ? [] : [`${at} needs address, effect read|write, approval, retired and input_sha256`];
}

function callProblems(c: unknown, at: string): string[] {
  if (!isDoc(c)) return [`${at} is not an object`];
  const problems: string[] = [];
  if (!isString(c['command_id']) || !isString(c['tool'])) problems.push(`${at} needs command_id and tool`);
  if (typeof c['arguments_json'] !== 'boolean' || !(c['arguments_sha256'] === null || isString(c['arguments_sha256']))) {
    problems.push(`${at} needs arguments_json and arguments_sha256`);
  }
  const d = c['decision'];
  if (
    !isDoc(d) ||
    !Object.values<unknown>(DecisionStatus).includes(d['status']) ||
    !optional(d['code'], isString) ||
    !optional(d['field'], isString)
  ) {
    problems.push(`${at}/decision needs a status of ${Object.values(DecisionStatus).join('|')}`);
  }
  const r = c['result'];
  if (!isDoc(r) || !Object.values<unknown>(TraceResultStatus).includes(r['status'])) problems.push(`${at}/result needs a status`);
  if (!optional(c['approval'], (a) => isDoc(a) && isString(a['decision']) && isString(a['role']) && isString(a['rule']))) {
    problems.push(`${at}/approval needs decision, role and rule`);
  }
  if (!optional(c['policy'], (p) => isDoc(p) && isString(p['environment']))) problems.push(`${at}/policy needs an environment`);
  return problems;
}

/** Reads a trace from its JSON text (a file, a fixture): checked once here, typed after. */
export function parseTrace(text: string): Trace {
  let doc: unknown;
  try {
    doc = JSON.parse(text) as unknown;
  } catch (cause) {
    throw new TraceError('TRACE_INVALID', 'the trace is not JSON', { cause });
  }
  if (!isDoc(doc) || doc['format'] !== TRACE_FORMAT) throw new TraceError('TRACE_INVALID', `the document is not a ${TRACE_FORMAT} trace`);
  const problems: string[] = [];
  const run = doc['run'];
  if (!isDoc(run) || !isString(run['run_id']) || !isString(run['tenant'])) problems.push('/run needs run_id and tenant');
  if (!isString(doc['recorded_at'])) problems.push('/recorded_at is missing');
  const catalog = doc['catalog'];
  if (!isDoc(catalog) || !isString(catalog['sha256']) || !Array.isArray(catalog['tools'])) problems.push('/catalog needs sha256 and tools');
  else catalog['tools'].forEach((t: unknown, i) => problems.push(...toolProblems(t, `/catalog/tools/${i}`)));
  if (!Array.isArray(doc['calls'])) problems.push('/calls is missing');
  else doc['calls'].forEach((c: unknown, i) => problems.push(...callProblems(c, `/calls/${i}`)));
  if (problems.length > 0) throw new TraceError('TRACE_INVALID', `the trace is invalid: ${problems.join('; ')}`);
  return doc as unknown as Trace;
}
