# One image for every Gatehouse service; the command picks the service.
# Build:  docker build -t gatehouse .
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY packages ./packages
COPY services ./services
COPY schemas ./schemas
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund \
 && node scripts/tsc.mjs -b \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages ./packages
COPY --from=build /app/services ./services
COPY --from=build /app/schemas ./schemas
COPY --from=build /app/scripts ./scripts
USER node
CMD ["node", "scripts/provision.mjs"]
