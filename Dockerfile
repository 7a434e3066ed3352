# Two stages: build the single executable with Node + npm (Bun comes from npm), then ship only the binary.
# test/dockerfile.test.ts runs these steps without Docker (scripts/dockerfile-steps.ts).
# Node 24 (an LTS line). The install runs on npm 11.19, which enforces package.json's allowScripts (.npmrc sets
# strict-allow-scripts): only the scripts the product needs run, and an unreviewed one fails the build. The image's
# own npm may predate allowScripts and would run every script, telemetry included. The build needs only what the
# server runs (`dependencies`, Bun among them): no test tools. --omit=peer is repeated because a command-line --omit
# replaces .npmrc's list instead of adding to it.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
RUN npx --yes npm@11.19.1 ci --omit=dev --omit=peer
COPY . .
# The build context has no .git (.dockerignore), so the builder names the commit the binary reports, e.g.
# docker build --build-arg TRELLIS_BUILD_COMMIT=$(git rev-parse --short=7 HEAD) -t trellis .   (else: commit unknown)
# Declared after npm ci, so a new commit does not redo the install.
ARG TRELLIS_BUILD_COMMIT
RUN npm run build

FROM debian:bookworm-slim
# The data volume is created owned by the unprivileged user, so the server can write it (a new named volume takes
# the ownership of this directory). Nothing else is written: the root filesystem may be read-only
# (docker run --read-only): the addons go to the data directory's cache, and no $TMPDIR is needed.
RUN useradd --system --home-dir /var/lib/trellis trellis \
 && mkdir -p /var/lib/trellis/data \
 && chown -R trellis:trellis /var/lib/trellis \
 && chmod 0700 /var/lib/trellis/data
COPY --from=build /src/dist/trellis /usr/local/bin/trellis
USER trellis
WORKDIR /var/lib/trellis
# Set TRELLIS_PUBLIC_URL to the address clients use: links and payment requirements name it.
ENV TRELLIS_HOST=0.0.0.0 \
    TRELLIS_PORT=8402 \
    TRELLIS_DATA_DIR=/var/lib/trellis/data
VOLUME ["/var/lib/trellis/data"]
EXPOSE 8402
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=6s --start-period=20s --retries=3 CMD ["/usr/local/bin/trellis", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/trellis"]
