# syntax=docker/dockerfile:1
# Build:  docker build -t stablegate .
# Run:    docker run -d -p 8080:8080 -v stablegate-data:/data \
#           -e STABLEGATE_BASE_URL=https://pay.example.com stablegate
# CLI:    docker run --rm -v stablegate-data:/data stablegate account create --name Shop --payout-address 0x...

ARG BUN_VERSION=1.4.5

# Build stage: the Bun toolchain compiles everything (migrations, contract artifacts, checkout
# assets included) into one self-contained executable.
FROM oven/bun:${BUN_VERSION} AS build
WORKDIR /src
COPY package.json bun.lock bunfig.toml ./
RUN bun install --frozen-lockfile
COPY . .
RUN bun run build

# Runtime stage: just the binary. It links against glibc, so a slim Debian rather than Alpine.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /data --no-create-home stablegate \
 && mkdir /data \
 && chown stablegate:stablegate /data \
 && chmod 0700 /data
COPY --from=build /src/dist/stablegate /usr/local/bin/stablegate
ENV STABLEGATE_DATA_DIR=/data \
    STABLEGATE_HOST=0.0.0.0 \
    STABLEGATE_PORT=8080
USER stablegate
WORKDIR /data
VOLUME /data
EXPOSE 8080
# No curl in the image: bash's /dev/tcp asks /healthz for its status line.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${STABLEGATE_PORT:-8080} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["/usr/local/bin/stablegate"]
CMD ["serve"]
