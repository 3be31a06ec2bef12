/** The Gatehouse programs that read the environment: the services and the tools beside them. */
export const Component = {
  policy: 'the policy service',
  executor: 'the executor',
  approval: 'the approval service',
  mcp: 'the MCP front door',
  provision: 'topic provisioning (scripts/provision.mjs, the Kubernetes Job)',
  cli: 'the gatehouse CLI',
  client: 'the agent runtime client (@gatehouse/client)',
} as const;
export type Component = keyof typeof Component;

/** The services, which read their settings through `readConfig`. */
export const SERVICES = ['policy', 'executor', 'approval', 'mcp'] as const satisfies readonly Component[];
