# Two stages: build the single executable with Node + npm (Bun comes from npm), then ship only the binary.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
RUN npm ci
COPY . .
RUN npm run build

FROM debian:bookworm-slim
RUN useradd --system --create-home --home-dir /var/lib/trellis trellis
COPY --from=build /src/dist/trellis /usr/local/bin/trellis
USER trellis
WORKDIR /var/lib/trellis
ENV TRELLIS_HOST=0.0.0.0 \
    TRELLIS_PORT=8402 \
    TRELLIS_DATA_DIR=/var/lib/trellis/data
VOLUME ["/var/lib/trellis/data"]
EXPOSE 8402
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/trellis"]
