# paymock: a static binary on a distroless base, running as non-root.
#
#   docker build -t paymock --build-arg VERSION=v0.1.0 .
#   docker run --rm -p 8080:8080 paymock --api-key sk_test_123
#
# Every flag can also be given as a PAYMOCK_* environment variable
# (see "paymock -h").
#
# The bases are build arguments so that a machine with no registry can
# build this same file on local stand-ins (scripts/image.sh makes them; see
# docs/docker.md). GOPROXY, when given, is the module proxy of the build.
# Nothing here needs BuildKit: the legacy builder and docker-compose v1
# build it too.

ARG BUILDER_IMAGE=golang:1.26-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${BUILDER_IMAGE} AS build
WORKDIR /src
ARG GOPROXY
# Modules first, so that the download layer is reused while only code changes.
COPY go.mod go.sum ./
# go.mod replaces kin-openapi's JSON Schema library with the patched copy
# there (docs/performance.md, "Start").
COPY third_party ./third_party
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/paymock ./cmd/paymock

FROM ${RUNTIME_IMAGE}
COPY --from=build /out/paymock /paymock
USER nonroot
EXPOSE 8080
ENV PAYMOCK_ADDR=:8080
# No shell or curl in the image: the binary checks itself (GET /healthz on
# the port of PAYMOCK_ADDR).
HEALTHCHECK --interval=5s --timeout=3s CMD ["/paymock", "healthcheck"]
ENTRYPOINT ["/paymock"]
