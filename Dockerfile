# agentauth's container image (docs/guides/operator.md, Containers).
#
#   docker build -t agentauth .        (podman: podman build --format docker -t agentauth .)
#   docker run -d -p 3000:3000 -v agentauth-data:/data --read-only \
#     -e BASE_URL=https://auth.example.com -e JWT_SECRET_FILE=/run/secrets/jwt_secret … agentauth
#   docker run --rm -v agentauth-data:/data agentauth client list
#
# The build stage compiles better-sqlite3 (where no prebuilt binary can be fetched) and bundles
# src/ into dist/agentauth.mjs; the final stage holds production dependencies, bin/, dist/ and the
# pages' static files, so bin/agentauth runs the bundle and writes nothing: the root filesystem can
# be read-only, the data lives on the /data volume, and the server runs as `node` (uid 1000).

FROM node:24-bookworm-slim AS build
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Dependencies first, so that a change of the sources reuses this layer. Production dependencies
# suffice for the build: the bundler, esbuild, is one of them (a development install is some 550 MB
# more to download and then prune).
COPY package.json package-lock.json ./
COPY packages/agent/package.json packages/agent/
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin/ bin/
COPY src/ src/
COPY packages/agent/src/ packages/agent/src/
RUN npm run build \
  # What the final stage need not carry: better-sqlite3's compiler output beside the module it made
  # (build/Release/better_sqlite3.node stays), and the workspace's link (the bundle holds the agent
  # package).
  && find node_modules/better-sqlite3/build -mindepth 1 -not -path '*/build/Release' \
    -not -path '*/build/Release/better_sqlite3.node' -delete \
  && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src node_modules/@agentauth

FROM node:24-bookworm-slim
WORKDIR /app
COPY --from=build /app/node_modules/ node_modules/
COPY --from=build /app/dist/ dist/
COPY package.json ./
COPY bin/ bin/
COPY src/web/assets/ src/web/assets/
# The data directory belongs to the server's user, before VOLUME: a new named volume takes its
# owner and mode (0700: the database and the development secret are the server's alone).
RUN mkdir -m 0700 /data && chown node:node /data \
  # `agentauth` on the PATH: `docker exec CONTAINER agentauth account create …`, the command the
  # server's hints name.
  && ln -s /app/bin/agentauth /usr/local/bin/agentauth
ENV DATABASE_URL=sqlite:///data/agentauth.db \
  HOST=0.0.0.0 \
  PORT=3000
VOLUME /data
EXPOSE 3000
USER node
# node itself (the slim image has no curl): ready means the database answers.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `serve` handles SIGTERM and SIGINT itself (in-flight requests finish, then exit 0), so node may
# be PID 1 without an init. Arguments replace `serve`: `docker run IMAGE client list`. The young
# generation capped as `npm start` does (docs/guides/operator.md, Memory).
ENTRYPOINT ["node", "--max-semi-space-size=4", "/app/bin/agentauth"]
CMD ["serve"]
