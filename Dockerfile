# Image for the api, worker and migrate services of docker-compose.yml. It runs
# production: Node 24 strips the TypeScript types itself (the code keeps to
# erasable syntax, tsconfig's erasableSyntaxOnly), so neither tsx nor any other
# devDependency is installed, and npm ci installs exactly package-lock.json.
# Production refuses to start without VALISE_SECRET and MASTER_KEYS of its own
# (docs/configuration.md, "Production").

# The documentation the API serves at /docs (docs/web.md, "The documentation") is built here,
# with the devDependencies (redocly, tsx) that the image itself goes without: only dist/docs is
# copied over.
FROM node:24-slim AS docs
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci && npm cache clean --force
COPY . .
RUN node --import tsx scripts/build-docs.ts

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY . .
COPY --from=docs /app/dist/docs dist/docs
USER node
EXPOSE 8080
# The V8 flags of every Valise process are in ops/node-flags (scripts/node.sh says why).
CMD ["sh", "-c", "exec node $(cat ops/node-flags) api/main.ts"]
