# One image for every Gatehouse service; the command picks the service:
#   node scripts/provision.mjs            topics, DLQs and schema registration (the default)
#   node services/policy/dist/main.js     policy service          (POLICY_PORT, 8091)
#   node services/executor/dist/main.js   executor                (EXECUTOR_PORT, 8092)
#   node services/approval/dist/main.js   approval API + console  (APPROVAL_PORT, 8093)
#   node services/mcp/dist/main.js        MCP front door          (MCP_PORT, 8095; --stdio for one run)
# The image carries no domain: every service hosts the tool pack GATEHOUSE_TOOL_PACK names, which a
# team adds in an image of its own (docs/tool-packs.md). The `reference` target adds the reference
# pack and its system of record, for docker compose and the demo:
#   node examples/customer-support/customers/dist/main.js   (CUSTOMERS_PORT, 8090)
# Build:  docker build -t gatehouse .          docker build --target reference -t gatehouse:reference .
# Every service binds 127.0.0.1 unless told otherwise: set POLICY_HOST / EXECUTOR_HOST /
# APPROVAL_HOST / MCP_HOST / CUSTOMERS_HOST to 0.0.0.0 in a container (docker-compose.yml and deploy/k8s do).

# ---- manifests: only the package.json files, so `npm ci` below is cached until a dependency changes
FROM node:24-bookworm-slim AS manifests
WORKDIR /app
COPY packages ./packages
COPY services ./services
COPY examples ./examples
RUN find packages services -mindepth 2 -maxdepth 2 ! -name package.json -exec rm -rf {} + \
 && find examples -mindepth 3 -maxdepth 3 ! -name package.json -exec rm -rf {} +

# ---- build: install everything, compile every project, then drop dev dependencies and sources
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=manifests /app ./
# --ignore-scripts: the root `prepare` (a workspace build) runs below, once the sources are copied.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.base.json ./
COPY packages ./packages
COPY services ./services
COPY examples ./examples
COPY scripts ./scripts
RUN node scripts/tsc.mjs -b \
 && npm prune --omit=dev --no-audit --no-fund \
 && find packages services -mindepth 2 -maxdepth 2 \
      \( -name src -o -name test -o -name 'tsconfig*.json' -o -name '*.tsbuildinfo' \) -exec rm -rf {} + \
 && find examples -mindepth 3 -maxdepth 3 \
      \( -name src -o -name test -o -name 'tsconfig*.json' -o -name '*.tsbuildinfo' \) -exec rm -rf {} + \
 && test -f services/approval/console/index.html \
 && for s in policy executor approval mcp; do test -f "services/$s/dist/main.js"; done \
 && test -f examples/customer-support/customers/dist/main.js

# ---- runtime: compiled JavaScript, production dependencies and the data files read at start-up
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
# kafkajs schedules its request queue's check with a negative delay, which Node 24 warns of on every
# connection; the check runs 1 ms later all the same (scripts/supported-node.mjs).
ENV NODE_OPTIONS=--disable-warning=TimeoutNegativeWarning
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
# dist/, package.json and (approval) console/ of every workspace; node_modules/@gatehouse/* link here
COPY --from=build /app/packages ./packages
COPY --from=build /app/services ./services
COPY --from=build /app/scripts ./scripts
# The wire contract (Avro sources), which @gatehouse/events reads from /app/schemas.
COPY schemas ./schemas
# Numeric uid/gid of the image's `node` user, so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
CMD ["node", "scripts/provision.mjs"]

# ---- reference: the core image plus the reference tool pack (roles, policy table, DEMO approvers)
# and its customers service; a team's own pack is added the same way, in an image of its own.
FROM runtime AS reference
COPY --from=build --chown=1000:1000 /app/examples/customer-support ./examples/customer-support
ENV GATEHOUSE_TOOL_PACK=@gatehouse/example-customer-support
