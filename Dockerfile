# syntax=docker/dockerfile:1
# Sightline in a container: compiled JavaScript, production dependencies only, run as the
# unprivileged `node` user, data in the /data volume (SQLite by default; set DATABASE_URL to a
# postgres:// URL to use PostgreSQL, as compose.yml does).
#
#   docker build -t sightline .
#   docker run -d --name sightline -p 3000:3000 -v sightline-data:/data sightline
#   docker exec -it sightline sightline admin create-account --email you@example.com --name "Your Name"

ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: all dependencies, compile, then drop the dev dependencies ------------------------
FROM ${NODE_IMAGE} AS build
# better-sqlite3 downloads a prebuilt binary; where it cannot, node-gyp compiles it with these.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Dependencies first, in their own layer: a change to the sources does not reinstall them.
# --ignore-scripts because `prepare` (the build) needs the sources, copied below; the two
# packages that need their install scripts get them through `npm rebuild`.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 esbuild
COPY . .
RUN node scripts/build.mjs --no-types \
 && npm prune --omit=dev --no-audit --no-fund
# What the server never loads: esbuild (it compiled dist/ just above), SQLite's sources and the
# compiler's leftovers beside better-sqlite3's binary. About 35 MB.
RUN mv node_modules/better-sqlite3/build/Release/better_sqlite3.node /tmp/ \
 && rm -rf node_modules/better-sqlite3/build node_modules/better-sqlite3/deps \
           node_modules/esbuild node_modules/@esbuild node_modules/.bin/esbuild \
 && mkdir -p node_modules/better-sqlite3/build/Release \
 && mv /tmp/better_sqlite3.node node_modules/better-sqlite3/build/Release/

# --- runtime: what `npm ci --omit=dev` and the build leave, nothing else ---------------------
FROM ${NODE_IMAGE}
# tini is PID 1: it passes SIGTERM on to the server (which drains, then exits) and reaps zombies.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=sqlite:/data/sightline.db
WORKDIR /app
# Owned by root and read-only to the server: it can write its data, never its own code.
COPY --from=build /app/package.json /app/openapi.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin/sightline.js ./bin/sightline.js
# `sightline ...` on the PATH, for `docker exec` and `docker compose exec`.
RUN ln -s /app/bin/sightline.js /usr/local/bin/sightline \
 && mkdir -p /data \
 && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
# Liveness only (/readyz says whether the database answers): Node's own fetch, no curl needed.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "sightline"]
CMD ["serve"]
