# Image for the api and worker processes (docker-compose.yml). Temporal and PostgreSQL run as their
# own services there, so the Temporal CLI is not installed into the image.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production VOUCH_SKIP_TEMPORAL_INSTALL=1
COPY package.json package-lock.json ./
RUN npm install --omit=dev
COPY . .
# Bundle the workflow code once; workers load dist/workflow-bundle.js instead of bundling at start.
RUN node scripts/build-workflows.ts
# the image's `node` user, by number so Kubernetes can check runAsNonRoot
USER 1000:1000
EXPOSE 3000
CMD ["node", "api/server.ts"]
