# streambench as a container image: a static binary on distroless, run as a non-root user.
#   docker build -t REGISTRY/streambench:TAG . && docker push REGISTRY/streambench:TAG
# deploy/k8s runs it (set the image in deploy/k8s/kustomization.yaml).

# The Go of go.mod's go line.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static (no cgo, so no libc to find at run time); no VCS stamp, since .git is not copied.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/streambench ./cmd/streambench

# distroless/static: CA certificates and /etc/passwd, no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/streambench /streambench
# The distroless nonroot user, by number so Kubernetes' runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/streambench"]
