# One image for both processes; the command picks web or worker (see docker-compose.yml, Procfile).
# Production runs on Node.js 22 LTS, the release line oidc-provider and our dependencies support.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim AS app
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/package.json ./
USER node
EXPOSE 3000
CMD ["node", "dist/bin/web.js"]

# Browser-job workers (WORKER_QUEUES=browser): the same image with Debian's Chromium at
# /usr/bin/chromium (CHROMIUM_PATH). Build it with --target browser; no other process needs it.
FROM app AS browser
USER root
RUN apt-get update && apt-get install -y --no-install-recommends chromium && rm -rf /var/lib/apt/lists/*
USER node
CMD ["node", "dist/bin/worker.js"]

# The default image: the API, and every worker but the browser's.
FROM app
