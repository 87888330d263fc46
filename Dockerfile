# syntax=docker/dockerfile:1
# --- build: compile TypeScript with the dev dependencies ---
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Only src/ is compiled: the benchmark is not part of the image.
RUN npm run build

# --- runtime: production dependencies and the compiled output only ---
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    TOLLGATE_CONFIG=/etc/tollgate/config.yaml
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The default config is baked in; mount your own at /etc/tollgate/config.yaml
# (docker run -v $PWD/my.yaml:/etc/tollgate/config.yaml:ro ...).
COPY config/default.yaml /etc/tollgate/config.yaml
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
