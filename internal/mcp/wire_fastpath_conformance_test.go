package mcp_test

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"

	"github.com/neemias/neemias-mcp/internal/mcp"
	"github.com/neemias/neemias-mcp/internal/mcp/conformance"
)

// The requests of both official conformance suites (0.1.16 --suite all, the 2025 era, and
// 0.2.0-alpha.12 --requirements 2026-07-28, against the fixtures; their fixture-free scenarios
// against the generated registry), as the harness's proxy recorded them: re-record with
//
//	WIRE_LOG_DIR=$PWD/internal/mcp/testdata/conformance-wire internal/mcp/conformance/testdata/harness/run-conformance.sh
//
// (mcp-proxy.mjs --log-bodies; raw logs are read as they are, or compacted to the fields below).
const conformanceWire = "testdata/conformance-wire/"

type recorded struct {
	Dir        string      `json:"dir"`
	Method     string      `json:"method"`
	Path       string      `json:"path"`
	RawHeaders [][2]string `json:"rawHeaders"`
	Authorized bool        `json:"authorized"`
	Body       string      `json:"body"`
}

func loadWire(t *testing.T, file, token string) []wireReq {
	t.Helper()
	f, err := os.Open(conformanceWire + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []wireReq
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		var r recorded
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if r.Dir != "" && r.Dir != "req" {
			continue
		}
		w := wireReq{Method: r.Method, Path: r.Path, Header: r.RawHeaders, Body: r.Body}
		if r.Authorized {
			w.Header = append(w.Header, [2]string{"Authorization", "Bearer " + token})
		}
		out = append(out, w)
	}
	if len(out) < 50 {
		t.Fatalf("%s holds %d requests: re-record it", file, len(out))
	}
	return out
}

// TestFastPathMatchesEngineOnConformance replays every request the two conformance suites sent
// to the fixtures and to the generated registry, to the engine and to the fast path.
func TestFastPathMatchesEngineOnConformance(t *testing.T) {
	const token, base = "conformance-diff", "http://127.0.0.1:3000"
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		file  string
		build func(string, string, *slog.Logger, func(*mcp.Options)) (http.Handler, error)
	}{
		{"fixtures.jsonl", conformance.NewServerWith},
		{"neemias.jsonl", conformance.NewNeemiasServerWith},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p := newPair(t, func(adjust func(*mcp.Options)) http.Handler {
				h, err := tc.build(base, token, logger, adjust)
				if err != nil {
					t.Fatal(err)
				}
				return h
			})
			reqs := loadWire(t, tc.file, token)
			failed := 0
			for _, r := range reqs {
				if !p.check(t, r, nil) {
					if failed++; failed > 10 {
						t.Fatal("too many differences")
					}
				}
			}
			t.Logf("%d requests, %d answered by the fast path", len(reqs), mcp.FastAnswered(p.fast))
			if mcp.FastAnswered(p.fast) == 0 {
				t.Error("the fast path answered none of them")
			}
		})
	}
}
