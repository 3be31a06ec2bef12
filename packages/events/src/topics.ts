import type { ApprovalDecision, ApprovalRequest, ExecutionOrder, OperatorHandoff, ToolCommand, ToolResult } from './event-types.js';

/** Every topic Gatehouse owns, by the role it plays in the flow. */
export const TopicRole = {
  commands: 'commands',
  execute: 'execute',
  results: 'results',
  approvalsRequested: 'approvalsRequested',
  approvalsDecided: 'approvalsDecided',
  operator: 'operator',
} as const;
export type TopicRole = (typeof TopicRole)[keyof typeof TopicRole];

export const TOPIC_ROLES: readonly TopicRole[] = Object.values(TopicRole);

const BASE_NAMES: Readonly<Record<TopicRole, string>> = {
  commands: 'gatehouse.commands',
  execute: 'gatehouse.execute',
  results: 'gatehouse.results',
  approvalsRequested: 'gatehouse.approvals.requested',
  approvalsDecided: 'gatehouse.approvals.decided',
  operator: 'gatehouse.operator',
};

/** The event each topic carries. */
export interface EventByRole {
  commands: ToolCommand;
  execute: ExecutionOrder;
  results: ToolResult;
  approvalsRequested: ApprovalRequest;
  approvalsDecided: ApprovalDecision;
  operator: OperatorHandoff;
}

/** The Avro source of each topic's event, a file in the repository's top-level `schemas/`. */
export const SCHEMA_FILE_BY_ROLE: Readonly<Record<TopicRole, string>> = {
  commands: 'ToolCommand.avsc',
  execute: 'ExecutionOrder.avsc',
  results: 'ToolResult.avsc',
  approvalsRequested: 'ApprovalRequest.avsc',
  approvalsDecided: 'ApprovalDecision.avsc',
  operator: 'OperatorHandoff.avsc',
};

export type Topics = Readonly<Record<TopicRole, string>>;

/**
 * Topic names, optionally under a prefix (`GATEHOUSE_TOPIC_PREFIX`) so that several deployments,
 * or tests running in parallel, share one cluster without seeing each other's events.
 */
export function topicNames(prefix = ''): Topics {
  const names = {} as Record<TopicRole, string>;
  for (const role of TOPIC_ROLES) names[role] = `${prefix}${BASE_NAMES[role]}`;
  return names;
}

/** Where undecodable records of a topic go. */
export function dlqTopicOf(topic: string): string {
  return `${topic}.dlq`;
}

/** The registry subject of a topic's values under TopicNameStrategy. */
export function subjectOf(topic: string): string {
  return `${topic}-value`;
}
