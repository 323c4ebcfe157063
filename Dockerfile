# syntax=docker/dockerfile:1
# The registry's image: built in one stage with the toolchain, run in another with production
# dependencies only, as a non-root user, with a read-only root filesystem and the data under /data.
# What was tested of it, and how: docs/deploy.md.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json ./
COPY packages ./packages
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
RUN npm run build
# What the runtime stage keeps: the production dependencies, natives compiled above.
RUN npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
# pg_dump for scheduled backups on PostgreSQL; tini forwards SIGTERM and reaps the start-up helper.
RUN apt-get update \
  && apt-get install -y --no-install-recommends postgresql-client tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
  PORT=8080 \
  HOST=0.0.0.0 \
  DATABASE_URL=sqlite:/data/registry.db
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages/protocol/package.json ./packages/protocol/
COPY --from=build /app/packages/protocol/dist ./packages/protocol/dist
COPY --from=build /app/packages/search-index/package.json ./packages/search-index/
COPY --from=build /app/packages/search-index/dist ./packages/search-index/dist
COPY --from=build /app/packages/server/package.json ./packages/server/
COPY --from=build /app/packages/server/dist ./packages/server/dist
COPY --from=build /app/packages/server/assets ./packages/server/assets
# The node image's unprivileged user (uid 1000); the code stays root's and read-only to it.
RUN mkdir -p /data /backups && chown node:node /data /backups
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "packages/server/dist/main.js"]
