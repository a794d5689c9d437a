# Image for the api, worker and migrate services of docker-compose.yml. The app
# runs its TypeScript directly through tsx, as in local development.
FROM node:24-slim
WORKDIR /app
COPY package.json package-lock.json ./
# tsx is a devDependency, so dev dependencies stay in. A lock written on our
# offline machines lacks other platforms' optional binaries and npm ci rejects
# it; npm install --no-save then installs the same locked versions.
RUN npm ci || npm install --no-save
COPY . .
USER node
EXPOSE 8080
CMD ["node", "--import", "tsx", "api/main.ts"]
