# The image `volley k8s` manifests run (coordinator and generators alike).
#
#   docker build -t volley:dev .
#   docker run --rm volley:dev --help
#
# Stage 1 builds a release binary; stage 2 is a small runtime image (Debian slim, not distroless:
# `kubectl cp`, how the merged results are fetched, needs `tar` in the container; glibc; no
# shell tools beyond the base) running as a non-root user. TLS roots are compiled in
# (webpki-roots), so the runtime image needs no CA bundle.
#
# What the manifests of `volley k8s` rely on: the entrypoint is the binary (their `args` start
# with `coordinate` / `run`), at /usr/local/bin/volley; user and group 10001 (their
# `runAsUser`/`runAsGroup`, `runAsNonRoot`); nothing written outside /results (an emptyDir there;
# the root filesystem is read-only); port 7070 (the coordinator's).
#
# UNTESTED: this image has never been built. The machine it was written on has a `docker`
# client but no Docker daemon (`docker info` cannot connect to /var/run/docker.sock), and no
# container registry is reachable from it, so neither base image can be pulled. What was checked
# instead: the stub stage's `cargo fetch --locked` over these manifests, and `cargo check --locked
# --bin volley` over exactly what the COPY lines bring in (Cargo.toml, Cargo.lock, src/, proto/).
# `.ci/run` builds and runs the image wherever `docker info` succeeds.

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# Dependencies downloaded first, so source edits do not download them again: a stub main over
# the real manifests. (Only the download is cached: they are compiled with the sources below.)
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
