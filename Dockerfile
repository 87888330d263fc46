# syntax=docker/dockerfile:1
# --- build: compile TypeScript with the dev dependencies ---
FROM node:20-bookworm-slim AS build
# better-sqlite3 compiles its native module from source (no prebuilt binary is fetched here).
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The console (SPEC 17) is built by Vite into dist/console/, which the gateway serves at /console/.
COPY console ./console
# Only src/ and console/ are built: the benchmark is not part of the image.
RUN npm run build

# --- deps: production dependencies only, native modules compiled with the same toolchain ---
FROM node:20-bookworm-slim AS deps
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- runtime: node_modules and the compiled output, no compiler, not root ---
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    TOLLGATE_CONFIG=/etc/tollgate/config.yaml
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The default config is baked in; mount your own at /etc/tollgate/config.yaml
# (docker run -v $PWD/my.yaml:/etc/tollgate/config.yaml:ro ...).
COPY config/default.yaml /etc/tollgate/config.yaml
# Presets a mounted config may include (include: [presets/training-api.yaml], relative to it).
COPY config/presets /etc/tollgate/presets
# The embedded SQLite file (database.path: data/tollgate.db) lives here: writable by the
# non-root user, and a volume so keys, ownership and the ledger outlive the container.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
