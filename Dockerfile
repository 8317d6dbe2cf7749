# syntax=docker/dockerfile:1
# The Neemias MCP server as a container: a static binary (no cgo) on distroless's static base
# (CA certificates, tzdata, /etc/passwd with nonroot; no shell, no package manager), run as
# the unprivileged user nonroot. Configuration comes from NEEMIAS_* variables and secret files
# (deploy/kubernetes). Build: docker build -t neemias-mcp .
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOFLAGS=-trimpath go build -ldflags="-s -w" -o /out/neemias-mcp ./cmd/neemias-mcp

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/neemias-mcp /usr/local/bin/neemias-mcp
USER nonroot:nonroot
# The main listener (MCP, OAuth, REST) and the metrics listener.
ENV NEEMIAS_ADDR=0.0.0.0:8080 NEEMIAS_METRICS_ADDR=0.0.0.0:9090
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/neemias-mcp"]
CMD ["serve"]
