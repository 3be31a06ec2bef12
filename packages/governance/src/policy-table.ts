import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ToolContract } from '@gatehouse/contracts';

/** What a rule decides. */
export type PolicyDecision =
  | { readonly kind: 'allow' }
  | {
      readonly kind: 'require_approval';
      readonly approverRole: string;
      readonly ttlMs: number;
      /** A high-risk approval: the approver must have signed in at the IdP within this many seconds (OIDC max_age). */
      readonly recentSignInS?: number;
    }
  | { readonly kind: 'deny'; readonly reason: string; readonly next?: string };

export interface PolicyMatch {
  readonly effect?: 'read' | 'write';
  readonly tools?: readonly string[];
  /** The approval rule ids tools declare (their contract's `approval`). */
  readonly approvalRules?: readonly string[];
  readonly environments?: readonly string[];
  readonly destructive?: boolean;
  readonly affectedRecordsOver?: number;
  /** Thresholds per currency, in minor units; an amount in a currency not listed always matches. */
  readonly amountOver?: readonly { readonly minor: number; readonly currency: string }[];
  readonly externalRecipients?: boolean;
  readonly irreversible?: boolean;
}

export interface PolicyRule {
  readonly id: string;
  readonly description: string;
  readonly match: PolicyMatch;
  readonly decision: PolicyDecision;
}

/** The facts of one proposed effect that rules look at. */
export interface PolicySubject {
  readonly tool: ToolContract;
  readonly environment: string;
  readonly affectedRecords: number;
  readonly amount: { readonly minor: number; readonly currency: string } | null;
  readonly recipients: readonly string[];
  readonly irreversible: readonly string[];
}

/** What a caller branches on in a decision: its kind and, to ask a person, whom. */
export type PolicyOutcome =
  { readonly kind: 'allow' } | { readonly kind: 'require_approval'; readonly approverRole: string } | { readonly kind: 'deny' };

/**
 * Anything that decides a subject the way `PolicyTable` does: the table itself, or a stub in a
 * test. Trace replay needs only this much.
 */
export interface PolicyEvaluator {
  evaluate(subject: PolicySubject): { readonly ruleId: string; readonly decision: PolicyOutcome };
}

const DECISION = {
  oneOf: [
    { type: 'object', additionalProperties: false, required: ['kind'], properties: { kind: { const: 'allow' } } },
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'approverRole', 'ttlMs'],
      properties: {
        kind: { const: 'require_approval' },
        approverRole: { type: 'string', minLength: 1 },
        ttlMs: { type: 'integer', minimum: 1000, maximum: 7 * 24 * 3600 * 1000 },
        recentSignInS: { type: 'integer', minimum: 1, maximum: 24 * 3600 },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'reason'],
      properties: { kind: { const: 'deny' }, reason: { type: 'string', minLength: 1 }, next: { type: 'string' } },
    },
  ],
} as const;

/** The JSON Schema of a policy table (published as @gatehouse/sdk/schemas/policy-table.schema.json). */
export const POLICY_TABLE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['rules'],
  properties: {
    $schema: { type: 'string' },
    rules: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'description', 'match', 'decision'],
        properties: {
          id: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' },
          description: { type: 'string', minLength: 1 },
          match: {
            type: 'object',
            additionalProperties: false,
            properties: {
              effect: { enum: ['read', 'write'] },
              tools: { type: 'array', items: { type: 'string' } },
              approvalRules: { type: 'array', items: { type: 'string' } },
              environments: { type: 'array', items: { type: 'string' } },
              destructive: { type: 'boolean' },
              affectedRecordsOver: { type: 'integer', minimum: 0 },
              amountOver: {
                type: 'array',
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['minor', 'currency'],
                  properties: { minor: { type: 'integer', minimum: 0 }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
                },
              },
              externalRecipients: { type: 'boolean' },
              irreversible: { type: 'boolean' },
            },
          },
          decision: DECISION,
        },
      },
    },
  },
} as const;

const validate = new Ajv2020({ strict: true, allErrors: true }).compile(POLICY_TABLE_SCHEMA);

/**
 * The policy table: data, evaluated at runtime, first matching rule wins, no match denies. Checked
 * once at start-up: the schema, unique ids, and that every tool and approval rule it names exists.
 */
export class PolicyTable implements PolicyEvaluator {
  private constructor(readonly rules: readonly PolicyRule[]) {}

  static parse(document: unknown, tools: readonly ToolContract[]): PolicyTable {
    const raw: unknown = document;
    if (!validate(raw)) {
      const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
      throw new Error(`policy table is invalid: ${problems.join('; ')}`);
    }
    const rules = (document as { rules: PolicyRule[] }).rules;
    const problems: string[] = [];
    const ids = new Set<string>();
    const addresses = new Set<string>(tools.map((t) => t.address));
    const approvalRules = new Set(tools.flatMap((t) => (t.approval === undefined ? [] : [t.approval])));
    for (const rule of rules) {
      if (ids.has(rule.id)) problems.push(`rule ${rule.id} appears twice`);
      ids.add(rule.id);
      for (const tool of rule.match.tools ?? []) if (!addresses.has(tool)) problems.push(`rule ${rule.id} names unknown tool ${tool}`);
      for (const id of rule.match.approvalRules ?? [])
        if (!approvalRules.has(id)) problems.push(`rule ${rule.id} names approval rule ${id}, which no tool declares`);
    }
    if (problems.length > 0) throw new Error(`policy table is invalid: ${problems.join('; ')}`);
    return new PolicyTable(rules);
  }

  static load(path: string, tools: readonly ToolContract[]): PolicyTable {
    return PolicyTable.parse(JSON.parse(readFileSync(path, 'utf8')) as unknown, tools);
  }

  evaluate(subject: PolicySubject): { readonly ruleId: string; readonly decision: PolicyDecision } {
    for (const rule of this.rules) {
      if (matches(rule.match, subject)) return { ruleId: rule.id, decision: rule.decision };
    }
    return { ruleId: 'default-deny', decision: { kind: 'deny', reason: 'No policy rule allows this effect' } };
  }
}

function matches(m: PolicyMatch, s: PolicySubject): boolean {
  if (m.effect !== undefined && m.effect !== s.tool.effect) return false;
  if (m.tools !== undefined && !m.tools.includes(s.tool.address)) return false;
  if (m.approvalRules !== undefined && (s.tool.approval === undefined || !m.approvalRules.includes(s.tool.approval))) return false;
  if (m.environments !== undefined && !m.environments.includes(s.environment)) return false;
  if (m.destructive !== undefined && (s.tool.destructive === true) !== m.destructive) return false;
  if (m.affectedRecordsOver !== undefined && !(s.affectedRecords > m.affectedRecordsOver)) return false;
  if (m.amountOver !== undefined) {
    if (s.amount === null) return false;
    const amount = s.amount;
    const threshold = m.amountOver.find((t) => t.currency === amount.currency);
    if (threshold !== undefined && !(amount.minor > threshold.minor)) return false;
  }
  if (m.externalRecipients !== undefined && s.recipients.length > 0 !== m.externalRecipients) return false;
  if (m.irreversible !== undefined && s.irreversible.length > 0 !== m.irreversible) return false;
  return true;
}
