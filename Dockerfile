# Image for the api and worker processes (docker-compose.yml, deploy/kubernetes). Temporal and
# PostgreSQL run as their own services there, so the Temporal CLI is not installed into the image.
# .dockerignore keeps every .env file, key, local state and test output out of the build context.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production VOUCH_SKIP_TEMPORAL_INSTALL=1
COPY package.json package-lock.json ./
# exactly the lockfile's tree, without development dependencies; no install scripts (the project's
# own postinstall fetches developers' tools, and no runtime dependency needs one)
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY . .
# Bundle the workflow code once; workers load dist/workflow-bundle.js instead of bundling at start.
RUN node scripts/build-workflows.ts
# the image's `node` user, by number so Kubernetes can check runAsNonRoot; it owns nothing of /app
USER 1000:1000
EXPOSE 3000
CMD ["node", "api/server.ts"]
