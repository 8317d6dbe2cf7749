package logging_test

import (
	"bytes"
	"encoding/json"
	"log"
	"log/slog"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/logging"
)

func TestParseLevel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want slog.Level
		err  bool
	}{
		{"debug", slog.LevelDebug, false}, {"INFO", slog.LevelInfo, false}, {"", slog.LevelInfo, false},
		{"warn", slog.LevelWarn, false}, {"error", slog.LevelError, false}, {"verbose", 0, true},
	} {
		got, err := logging.ParseLevel(tc.in)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestInstallRoutesStdLog: a library writing through the std log package (zitadel/oidc's
// "registered route") and through slog.Default produces JSON lines of the one handler.
func TestInstallRoutesStdLog(t *testing.T) {
	prev, prevFlags := slog.Default(), log.Flags()
	t.Cleanup(func() { slog.SetDefault(prev); log.SetFlags(prevFlags) })
	var buf bytes.Buffer
	logging.Install(logging.New(&buf, slog.LevelInfo))
	log.Printf("INFO registered route %s", "/authorize")
	slog.Info("from slog", "k", 1)
	slog.Debug("below the level")
	logging.StdLogger(slog.Default(), slog.LevelWarn).Print("http: TLS handshake error")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["msg"] == nil || m["level"] == nil || m["time"] == nil {
			t.Errorf("not a JSON log line: %s (%v)", l, err)
		}
	}
	if !strings.Contains(lines[0], `"msg":"INFO registered route /authorize"`) || !strings.Contains(lines[2], `"level":"WARN"`) {
		t.Errorf("lines: %s", buf.String())
	}
}
