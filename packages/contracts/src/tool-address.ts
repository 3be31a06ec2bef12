/** `commit_address_change.v2`: a tool name and a positive version, the only way a tool is named. */
export type ToolAddress = `${string}.v${number}`;

export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]*$/;
const ADDRESS_PATTERN = /^([a-z][a-z0-9_]*)\.v([1-9][0-9]*)$/;

export function toolAddress(name: string, version: number): ToolAddress {
  return `${name}.v${version}`;
}

export interface ParsedAddress {
  readonly name: string;
  readonly version: number;
}

/** Parses `name.vN`; undefined for anything else (`x`, `x.v01`, `x.V1`, `X.v1`, `x.v0`). */
export function parseToolAddress(address: string): ParsedAddress | undefined {
  const match = ADDRESS_PATTERN.exec(address);
  if (match?.[1] === undefined || match[2] === undefined) return undefined;
  const version = Number(match[2]);
  return Number.isSafeInteger(version) ? { name: match[1], version } : undefined;
}
