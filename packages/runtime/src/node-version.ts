/**
 * The Node a service runs on: 24 LTS, or 22 LTS from 22.22 (`engines` in package.json, and
 * scripts/supported-node.mjs for the README's commands, say the same). Gatehouse's Kafka client
 * needs what older lines lack (`Promise.withResolvers`): a service started on one would fail at its
 * first connection with an error that names no Node at all.
 */
export const SUPPORTED_NODE = '^22.22.0 || >=24.0.0';

/** Why `version` (`22.23.5`, `v20.20.2`) cannot run a service, or undefined when it can. */
export function unsupportedNode(version: string): string | undefined {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  if (major >= 24 || (major === 22 && minor >= 22)) return undefined;
  return `Gatehouse needs Node ${SUPPORTED_NODE}; this is Node ${version.replace(/^v/, '')}`;
}
