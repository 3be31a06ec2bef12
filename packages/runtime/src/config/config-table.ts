import { Component } from './component.js';
import { TOOLING_VARIABLES } from './reserved-names.js';
import { VARIABLE_NAMES, VARIABLES } from './variables.js';
import type { Variable } from './variable.js';

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

function readBy(readers: readonly string[]): string {
  return Object.keys(Component)
    .filter((component) => readers.includes(component))
    .join(', ');
}

/**
 * The configuration table of docs/configuration.md, one row per variable of the schema in schema order, followed
 * by the reserved names only the scripts and deployment files use.
 */
export function configTableMarkdown(): string {
  const rows = VARIABLE_NAMES.map((name) => {
    const variable: Variable<unknown> = VARIABLES[name];
    return `| \`${name}\` | ${cell(variable.defaultText)} | ${cell(variable.values)} | ${readBy(variable.readers)} | ${cell(variable.doc)} |`;
  });
  const readers = Object.entries(Component).map(([name, what]) => `\`${name}\` is ${what}`);
  const tooling = Object.entries(TOOLING_VARIABLES).map(([name, use]) => `- \`${name}\`: ${use}`);
  return (
    [
      '| variable | default | values | read by | meaning |',
      '|---|---|---|---|---|',
      ...rows,
      '',
      `Read by: ${readers.join('; ')}.`,
      '',
      'Reserved for the scripts and deployment files (no service reads them; every service accepts them):',
      '',
      ...tooling,
    ].join('\n') + '\n'
  );
}
