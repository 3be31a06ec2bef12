import { RESERVED_PREFIXES } from '@gatehouse/sdk';

/**
 * Name prefixes Gatehouse owns (`RESERVED_PREFIXES`, defined once by the SDK, whose pack variables
 * live outside them). Deployments hand every service every variable (Kubernetes `envFrom`,
 * compose's shared block, scripts/services.mjs forwarding the whole environment), so a service cannot
 * refuse what it does not read; it refuses a name under these prefixes that no Gatehouse program
 * knows: most likely a typo that would otherwise be silently ignored.
 */
export { RESERVED_PREFIXES };

/**
 * Names under the reserved prefixes that the stack and dev scripts and the deployment files use
 * and no service reads. They reach services through a developer's shell or a deployment.
 */
export const TOOLING_VARIABLES = {
  GATEHOUSE_CACHE_DIR: 'where the local stack caches the Kafka and registry jars (deploy/local)',
  GATEHOUSE_KAFKA_READY_TIMEOUT_MS: 'how long `npm run stack:up` waits for Kafka (deploy/local)',
  GATEHOUSE_REGISTRY_JAVA_HOME: 'the JDK 21+ of the local schema registry (deploy/local, scripts/prerequisites.mjs)',
  GATEHOUSE_KEYCLOAK_JAVA_HOME: 'the JDK 21+ of the local identity provider, Keycloak (deploy/local)',
  GATEHOUSE_DEMO_LOGS: 'where `npm run demo` keeps the service logs (scripts/demo.mjs)',
  GATEHOUSE_SOAK_MINUTES: "how long the soak's load lasts; `npm run soak -- --minutes` sets it (scripts/soak.mjs)",
  GATEHOUSE_SOAK_RATE: "the soak's calls per second; `--rate` sets it (scripts/soak.mjs)",
  GATEHOUSE_SOAK_FAULT_EVERY_MINUTES: "the minutes between the soak's faults; `--fault-every` sets it (scripts/soak.mjs)",
  APPROVAL_DATABASE_URL: "the Secret key that becomes the approval pod's `DATABASE_URL` (deploy/k8s/secret.yaml)",
} as const;
export type ToolingVariable = keyof typeof TOOLING_VARIABLES;

export function isReserved(name: string): boolean {
  return RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix));
}
