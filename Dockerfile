# The image `volley k8s` manifests run (coordinator and generators alike).
#
#   docker build -t volley:dev .
#   docker run --rm volley:dev --help
#
# Stage 1 builds a release binary; stage 2 is a small runtime image (Debian slim, not distroless:
# `kubectl cp`, how the merged results are fetched, needs `tar` in the container; glibc; no
# shell tools beyond the base) running as a non-root user. TLS roots are compiled in
# (webpki-roots), so the runtime image needs no CA bundle.

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# Dependencies first, so source edits do not rebuild them: a stub main over the real manifests.
COPY Cargo.toml Cargo.lock ./
RUN mkdir src && echo 'fn main() {}' > src/main.rs && touch src/lib.rs \
    && cargo fetch --locked \
    && rm -rf src
COPY src ./src
COPY proto ./proto
RUN cargo build --release --locked --bin volley \
    && strip target/release/volley

FROM debian:bookworm-slim AS runtime
# A fixed, unprivileged user (numeric, so `runAsNonRoot` can verify it).
RUN useradd --uid 10001 --user-group --no-create-home --home-dir /nonexistent volley \
    && mkdir /results && chown 10001:10001 /results
COPY --from=build /src/target/release/volley /usr/local/bin/volley
USER 10001:10001
WORKDIR /results
EXPOSE 7070
ENTRYPOINT ["volley"]
CMD ["--help"]
