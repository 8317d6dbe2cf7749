#!/usr/bin/env bash
# Run both official MCP conformance suites against the Neemias conformance fixture server.
#
#   internal/mcp/conformance/testdata/harness/run-conformance.sh [OUTDIR]
#
# Builds cmd/neemias-conformance, starts it on a free loopback port (it requires a bearer token,
# which a loopback proxy injects because the suite cannot send one), then runs
#   1. conformance 0.1.16 --suite all (2025 era); verdict.mjs then requires the failing
#      scenarios to be exactly those of expected-failures-2025.yml (the four inherent ones);
#   2. conformance 0.2.0-alpha.12 --requirements 2026-07-28: every scored scenario must pass.
# Exit code: 0 only if both verdicts pass. Installs the pinned npm packages on first use.
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
MCP_TOKEN="$TOKEN" SUITE=all "$HERE/conformance.sh" "$URL" "$OUT/2025" || true
"$HERE/node_modules/node/bin/node" "$HERE/verdict.mjs" "$OUT/2025/summary.json" "$HERE/expected-failures-2025.yml" || fail
echo "== 2026-07-28: conformance 0.2.0-alpha.12 --requirements 2026-07-28"
MCP_TOKEN="$TOKEN" REQUIREMENTS=2026-07-28 "$HERE/conformance.sh" "$URL" "$OUT/2026" || fail
if [ "$rc" -eq 0 ]; then echo "[conformance] both suites pass (results in $OUT)"; else echo "[conformance] FAILED (results in $OUT)"; fi
echo "conformance-suites: $((2 - rc)) passed, $rc failed"
[ "$rc" -eq 0 ]
