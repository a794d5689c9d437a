# Image for the api, worker and migrate services of docker-compose.yml. It runs
# production: Node 24 strips the TypeScript types itself (the code keeps to
# erasable syntax, tsconfig's erasableSyntaxOnly), so neither tsx nor any other
# devDependency is installed, and npm ci installs exactly package-lock.json.
# Production refuses to start without VALISE_SECRET and MASTER_KEYS of its own
# (docs/configuration.md, "Production").
FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY . .
USER node
EXPOSE 8080
# The V8 flags of every Valise process are in ops/node-flags (scripts/node.sh says why).
CMD ["sh", "-c", "exec node $(cat ops/node-flags) api/main.ts"]
