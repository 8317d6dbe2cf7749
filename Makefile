# Neemias MCP. `make help` lists the targets. Generators are pinned in go.mod (tools.go) and
# built into ./bin on first use, so a fresh machine needs only Go and the module proxy.
SHELL := /bin/bash
GO    ?= go
BIN   := $(CURDIR)/bin
SQLC  := $(BIN)/sqlc
OGEN  := $(BIN)/ogen

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(SQLC): go.mod go.sum
	@mkdir -p $(BIN)
	$(GO) build -o $(SQLC) github.com/sqlc-dev/sqlc/cmd/sqlc

$(OGEN): go.mod go.sum
	@mkdir -p $(BIN)
	$(GO) build -o $(OGEN) github.com/ogen-go/ogen/cmd/ogen

.PHONY: tools
tools: $(SQLC) $(OGEN) ## Build the pinned generators (sqlc, ogen) into ./bin

.PHONY: generate
generate: $(SQLC) $(OGEN) ## Regenerate everything from spec/capabilities.yaml
	@# One transaction (capgen.Apply): capgen stages its files, runs sqlc (gen/db) and ogen
	@# (gen/openapi/oas: the REST router, with internal/capgen/ogen.yml's features: no client, no
	@# OpenTelemetry) on them in a temporary directory, checks gofmt, and moves the result in
	@# only when every step succeeded, so a broken spec, query or document leaves every generated
	@# file as it was. Files capgen no longer writes are deleted (gen/capgen-files.txt lists them).
	$(GO) run ./cmd/capgen generate --sqlc $(SQLC) --ogen $(OGEN)

.PHONY: scaffold
scaffold: ## Create a stub in internal/logic for every capability without one; report orphans
	$(GO) run ./cmd/capgen scaffold

.PHONY: inspect
inspect: ## What a role can reach: make inspect ROLE=VOLUNTARIO (or SCOPES=a,b)
	$(GO) run ./cmd/capgen inspect $(if $(ROLE),--role $(ROLE)) $(if $(SCOPES),--scopes $(SCOPES))

.PHONY: check-generated
check-generated: generate ## Fail when generated code drifts from the spec (new, changed or deleted files) or go.mod is untidy
	@changes="$$(git status --porcelain --untracked-files=all)"; \
	if [ -n "$$changes" ]; then \
		echo "generated code is out of date with the spec; run make generate and commit:"; \
		echo "$$changes"; git --no-pager diff --stat; git --no-pager diff | head -200; exit 1; \
	fi
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy; run go mod tidy"; exit 1; }
	@echo "generated code is up to date"

.PHONY: build
build: ## Build the binaries into ./bin
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/...

.PHONY: test-deps
test-deps: ## Install what the tests need beyond Go: Debian's chromium for the consent-page browser test
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing chromium (Debian package) for the browser tests"; \
		export DEBIAN_FRONTEND=noninteractive; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq chromium >/dev/null; }

.PHONY: test
test: test-deps ## Run every test (needs PostgreSQL on 127.0.0.1:5432 or DATABASE_URL; Node/npm for client tests)
	$(GO) test -count=1 ./...

# The failover tests (issue 24; cmd/neemias-mcp/failover_ha_test.go, build tag ha) start the real
# engines on loopback ports: etcd, a two-node Patroni cluster, HAProxy and PgBouncer. They take
# about five minutes (Patroni's 30 s TTL, four scenarios), so they are outside make test.
HA_DEBS := patroni etcd-server etcd-client haproxy pgbouncer

.PHONY: test-deps-ha
test-deps-ha: ## Install what make test-ha needs beyond Go: Debian's patroni, etcd-server, etcd-client, haproxy, pgbouncer (and postgresql when absent)
	@missing="$$(for p in $(HA_DEBS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done)"; \
	ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || missing="$$missing postgresql"; \
	missing="$$(echo $$missing)"; \
	if [ -n "$$missing" ]; then \
		echo "installing $$missing (Debian packages) for the failover tests"; \
		export DEBIAN_FRONTEND=noninteractive; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq $$missing >/dev/null; \
	fi

.PHONY: test-ha
test-ha: test-deps-ha ## Failover under load with the real engines (Patroni, etcd, HAProxy, PgBouncer); prints the figures
	$(GO) test -count=1 -tags ha -timeout 30m -v -run 'TestFailover' ./cmd/neemias-mcp

.PHONY: lint
lint: ## go vet and gofmt
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "not gofmt'd:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

# db-deps: make run needs a PostgreSQL it can reach (DATABASE_URL, 127.0.0.1:5432) or binaries
# to start its private cluster under .data/postgres (internal/devdb). With neither, it installs
# Debian's postgresql where apt exists (as test-deps does chromium), else says what to install.
.PHONY: db-deps
db-deps: ## Install Debian's postgresql for make run when no PostgreSQL is reachable or installed
	@if [ -n "$$DATABASE_URL$$NEEMIAS_DATABASE_URL" ] || (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null \
		|| command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
		echo "no PostgreSQL found: installing Debian's postgresql for the private cluster under .data/postgres"; \
		export DEBIAN_FRONTEND=noninteractive; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq postgresql >/dev/null; \
	else echo "make run needs PostgreSQL: install it (macOS: brew install postgresql@17; Fedora: dnf install postgresql-server) or set DATABASE_URL" >&2; exit 1; fi

.PHONY: run
run: db-deps ## Run the server with demo data and zero configuration
	$(GO) build -o $(BIN)/neemias-mcp ./cmd/neemias-mcp
	$(BIN)/neemias-mcp serve --demo

# The load generator of issue 8 (docs/performance.md): its own database (neemias_bench, from
# $DATABASE_URL's server), the real server as a subprocess, the floor in process. BENCH_FLAGS
# passes flags through, e.g. make bench BENCH_FLAGS='-duration 10s -clients 4'.
BENCH_FLAGS ?=
BENCH_SCALE ?= 1,10,100

.PHONY: bench
bench: ## Load-test floor, REST and MCP (tables, goals, bench-out/bench-results.json), cost growth 1×/10×/100×, then the micro-benchmarks
	$(GO) run ./cmd/neemias-bench -scale $(BENCH_SCALE) $(BENCH_FLAGS)
	$(MAKE) --no-print-directory bench-micro

.PHONY: bench-quick
bench-quick: ## Smoke run of the load generator (one short round, no cost growth)
	$(GO) run ./cmd/neemias-bench -quick $(BENCH_FLAGS)

.PHONY: bench-scale
bench-scale: ## Only the cost growth: seed 1×, 10×, 100×, p50/p99 of the reads and the check-in, EXPLAIN plans
	$(GO) run ./cmd/neemias-bench -scale-only -scale $(BENCH_SCALE) -out bench-out/bench-scale.json $(BENCH_FLAGS)

.PHONY: bench-micro
bench-micro: ## The go test micro-benchmarks
	$(GO) test -run '^$$' -bench . -benchmem ./...

.PHONY: conformance
conformance: ## Official MCP conformance suites (2025 era + 2026-07-28) against the fixture server
	internal/mcp/conformance/testdata/harness/run-conformance.sh

.PHONY: conformance-real
conformance-real: ## The suites' fixture-free scenarios against the assembled server (PostgreSQL, bearer token)
	$(GO) test -count=1 -run 'TestConformanceRealServer' -v ./internal/server
