/** The Gatehouse programs that read the environment: the three services and the tools beside them. */
export const Component = {
  policy: 'the policy service',
  executor: 'the executor',
  approval: 'the approval service',
  provision: 'topic provisioning (scripts/provision.mjs, the Kubernetes Job)',
  cli: 'the gatehouse CLI',
  client: 'the agent runtime client (@gatehouse/client)',
} as const;
export type Component = keyof typeof Component;

/** The three services, which read their settings through `readConfig`. */
export const SERVICES = ['policy', 'executor', 'approval'] as const satisfies readonly Component[];
