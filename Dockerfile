# ptc-executor service image.
#
# No compile step: Node 24 runs the TypeScript sources directly (type
# stripping), exactly as the tests run them, and the sandbox reads its guest
# bootstrap (sandbox/guest/*.ts) as source at run time, so shipping the
# sources is simpler and more faithful than shipping dist/. isolated-vm
# installs from its bundled prebuilt binary (linux x64/arm64, glibc): no
# compiler is needed.
#
#   docker build -t ptc-executor .
#   docker run -p 7700:7700 -e PTC_TOKEN=$(openssl rand -hex 32) -v ptc-data:/data ptc-executor
#
# The container binds 0.0.0.0, so it refuses to start without PTC_TOKEN.

# The OpenTelemetry packages are optional peers (tracing is off until OTEL_* names
# an exporter), so npm ci leaves them out: they are installed explicitly, at the
# versions package.json pins for the tests, with devDependencies dropped first so
# that install adds nothing else.
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm pkg delete devDependencies \
 && npm install --no-save --omit=dev --no-audit --no-fund \
      @opentelemetry/api@1.10.0 \
      @opentelemetry/sdk-trace@3.1.1 \
      @opentelemetry/context-async-hooks@3.1.1 \
      @opentelemetry/resources@3.1.1 \
      @opentelemetry/exporter-trace-otlp-http@0.301.2 \
 && npm cache clean --force

# The playground page (served at /) is a browser bundle built by Vite from
# dev dependencies; only its output goes into the image.
FROM node:24-slim AS playground
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY typings ./typings
COPY playground ./playground
RUN npm run build:playground

FROM node:24-slim
ENV NODE_ENV=production \
    PTC_HOST=0.0.0.0 \
    PTC_PORT=7700 \
    PTC_WORKSPACE=/data/workspace \
    PTC_DATA=/data/ptc
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
COPY sandbox ./sandbox
COPY typings ./typings
COPY services ./services
# The composition root the service creates Code Mode through.
COPY compose ./compose
COPY --from=playground /app/playground/dist ./playground/dist
# Docker fills an empty named volume from the image's folder at its mount point, owner included:
# made here and given to node, a volume mounted on one of these is writable by uid 1000.
RUN mkdir -p /data/workspace /data/ptc && chown -R node:node /data
# The image's unprivileged user (uid 1000); nothing under /app is writable by it.
USER node
VOLUME ["/data"]
EXPOSE 7700
# /healthz needs no token. node -e avoids installing curl in a slim image.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PTC_PORT || 7700) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains in-flight runs (shutdownGraceMs, default 10 s): give docker stop more than that.
STOPSIGNAL SIGTERM
CMD ["node", "--no-node-snapshot", "--no-wasm-code-gc", "--max-semi-space-size=16", "services/cli.ts", "serve"]
