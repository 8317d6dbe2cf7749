package mcp

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestSDKLoggerFloor(t *testing.T) {
	var buf bytes.Buffer
	l := sdkLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	l.Info("dropped info")
	l.With("k", "v").WithGroup("g").Debug("dropped debug")
	l.Warn("kept warn")
	l.With("k", "v").Error("kept error")
	out := buf.String()
	if strings.Contains(out, "dropped") || !strings.Contains(out, "kept warn") || !strings.Contains(out, "kept error") || !strings.Contains(out, "k=v") {
		t.Errorf("log:\n%s", out)
	}
}
