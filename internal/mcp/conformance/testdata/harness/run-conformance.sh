#!/usr/bin/env bash
# Run both official MCP conformance suites against the Neemias conformance fixture server.
#
#   internal/mcp/conformance/testdata/harness/run-conformance.sh [OUTDIR]
#
# Builds cmd/neemias-conformance, starts it on a free loopback port (it requires a bearer token,
# which a loopback proxy injects because the suite cannot send one), then runs
#   1. conformance 0.1.16 --suite all (2025 era); verdict.mjs then requires the failing
#      scenarios to be exactly those of expected-failures-2025.yml (the four inherent ones);
#   2. conformance 0.2.0-alpha.12 --requirements 2026-07-28: every scored scenario must pass;
#   3. the fixture-free scenarios of both suites against the real generated registry.
# Exit code: 0 only if both verdicts pass. Installs the pinned npm packages on first use.
# WIRE_LOG_DIR=dir records every request the suites send (bodies and headers) to
# dir/fixtures.jsonl and dir/neemias.jsonl: internal/mcp's differential test replays them.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../../../.." && pwd)"
OUT="${1:-$HERE/results/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT"
TOKEN="conformance-$RANDOM$RANDOM"

(cd "$ROOT" && go build -o "$OUT/neemias-conformance" ./cmd/neemias-conformance)
"$OUT/neemias-conformance" -token "$TOKEN" > "$OUT/server.out" 2> "$OUT/server.log" &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q '^MCP_URL=' "$OUT/server.out" && break; sleep 0.1; done
URL="$(sed -n 's/^MCP_URL=//p' "$OUT/server.out")"
[ -n "$URL" ] || { echo "fixture server did not start:"; cat "$OUT/server.log"; exit 1; }
echo "[conformance] fixture server $URL"

rc=0
fail() { rc=$((rc + 1)); }
echo "== 2025 era: conformance 0.1.16 --suite all, expected failures: $(grep -c '^  - ' "$HERE/expected-failures-2025.yml")"
# The tool exits 1 on any failing scenario; the verdict is verdict.mjs's exact comparison.
WLOG() { [ -n "${WIRE_LOG_DIR:-}" ] && echo "$WIRE_LOG_DIR/$1.jsonl" || true; }
export WIRE_LOG_BODIES="${WIRE_LOG_DIR:+1}"
WIRE_LOG="$(WLOG fixtures)" MCP_TOKEN="$TOKEN" SUITE=all "$HERE/conformance.sh" "$URL" "$OUT/2025" || true
"$HERE/node_modules/node/bin/node" "$HERE/verdict.mjs" "$OUT/2025/summary.json" "$HERE/expected-failures-2025.yml" || fail
echo "== 2026-07-28: conformance 0.2.0-alpha.12 --requirements 2026-07-28"
WIRE_LOG="$(WLOG fixtures)" MCP_TOKEN="$TOKEN" REQUIREMENTS=2026-07-28 "$HERE/conformance.sh" "$URL" "$OUT/2026" || fail

# 3. The fixture-free scenarios against the real generated registry (-registry neemias), one
#    scenario at a time. server-stateless is run and reported but not required: four of its
#    checks need the suite's diagnostic tools (test_missing_capability, test_logging_tool,
#    test_streaming_elicitation), which the Neemias registry does not and should not have.
"$OUT/neemias-conformance" -registry neemias -token "$TOKEN" > "$OUT/neemias.out" 2> "$OUT/neemias.log" &
NPID=$!
trap 'kill $PID $NPID 2>/dev/null || true; wait $PID $NPID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q '^MCP_URL=' "$OUT/neemias.out" && break; sleep 0.1; done
NURL="$(sed -n 's/^MCP_URL=//p' "$OUT/neemias.out")"
echo "== Neemias registry at $NURL: fixture-free scenarios"
for s in server-initialize ping tools-list resources-list dns-rebinding-protection; do
  if WIRE_LOG="$(WLOG neemias)" MCP_TOKEN="$TOKEN" SCENARIO=$s "$HERE/conformance.sh" "$NURL" "$OUT/neemias-2025-$s" > "$OUT/neemias-2025-$s.log" 2>&1; then echo "PASS 2025 $s"; else echo "FAIL 2025 $s"; fail; fi
done
for s in caching sep-2164-resource-not-found http-header-validation tools-list resources-list dns-rebinding-protection; do
  if WIRE_LOG="$(WLOG neemias)" MCP_TOKEN="$TOKEN" CONFORMANCE=next SPEC_VERSION=2026-07-28 SCENARIO=$s "$HERE/conformance.sh" "$NURL" "$OUT/neemias-2026-$s" > "$OUT/neemias-2026-$s.log" 2>&1; then echo "PASS 2026 $s"; else echo "FAIL 2026 $s"; fail; fi
done
WIRE_LOG="$(WLOG neemias)" MCP_TOKEN="$TOKEN" CONFORMANCE=next SPEC_VERSION=2026-07-28 SCENARIO=server-stateless "$HERE/conformance.sh" "$NURL" "$OUT/neemias-2026-server-stateless" > "$OUT/neemias-2026-server-stateless.log" 2>&1 || true
echo "info 2026 server-stateless: $(grep -E '^(PASS|FAIL) ' "$OUT/neemias-2026-server-stateless.log" | cut -c1-160)"

if [ "$rc" -eq 0 ]; then echo "[conformance] both suites pass (results in $OUT)"; else echo "[conformance] FAILED (results in $OUT)"; fi
echo "conformance-suites: $([ "$rc" -eq 0 ] && echo 1 || echo 0) passed, $([ "$rc" -eq 0 ] && echo 0 || echo 1) failed"
[ "$rc" -eq 0 ]
