#!/usr/bin/env bash
# Calls an MCP front door with the MCP Inspector's CLI (@modelcontextprotocol/inspector-cli), as a
# person would from a shell: tools/list, then tools/call of get_customer_v1 for C-1842, and, when a
# third argument names one, tools/call of that tool with no arguments.
#
#   test/mcp/inspector-cli.sh URL TOKEN [OTHER_TOOL]
#
# Prints one JSON object: {"list": <tools/list>, "call": <tools/call>[, "other": <tools/call>]}.
# The CLI exits 0 on an isError result and 1 on a refused token or a protocol error.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 URL TOKEN [OTHER_TOOL]" >&2
  exit 2
fi
url=$1
token=$2
other=${3:-}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cli="$root/node_modules/.bin/mcp-inspector-cli"
package="$root/node_modules/@modelcontextprotocol/inspector-cli"
if [[ ! -x $cli ]]; then
  echo "$cli is missing: run npm install at the repository root" >&2
  exit 2
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The CLI tests for "../package.json" relative to the working directory but imports it relative to
# its own module (build/index.js, inspector-cli 1.0.3): from its build directory both name its own
# package.json; from anywhere else it may import a file that does not exist.
inspect() {
  (cd "$package/build" && "$cli" --cli "$url" --transport http --header "Authorization: Bearer $token" "$@")
}
inspect --method tools/list >"$out/list"
# --tool-arg values are read as JSON, so a string is quoted.
inspect --method tools/call --tool-name get_customer_v1 --tool-arg 'customer_id="C-1842"' >"$out/call"
if [[ -n $other ]]; then
  inspect --method tools/call --tool-name "$other" >"$out/other"
fi

node -e '
const { readFileSync, existsSync } = require("node:fs");
const dir = process.argv[1];
const read = (name) => JSON.parse(readFileSync(`${dir}/${name}`, "utf8"));
const combined = { list: read("list"), call: read("call") };
if (existsSync(`${dir}/other`)) combined.other = read("other");
process.stdout.write(JSON.stringify(combined) + "\n");
' "$out"
