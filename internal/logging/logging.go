// Package logging is the process's one log format: slog's JSON handler at a configured level,
// installed as slog's default so that the standard library's log package (which zitadel/oidc
// and others write through) and every library that logs through slog.Default end up as JSON
// lines of the same handler. Hand-written; nothing here is generated.
package logging

import (
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
)

// ParseLevel reads a --log-level value: debug, info, warn or error (case-insensitive).
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		l = slog.LevelDebug
	case "info", "":
		l = slog.LevelInfo
	case "warn", "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		return l, fmt.Errorf("must be one of debug, info, warn, error (got %q)", s)
	}
	return l, nil
}

// New returns a JSON logger writing to w at level.
func New(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// Install makes l the process's default logger and routes the standard log package into it:
// slog.SetDefault redirects log's output to l's handler (at info), so a library's
// log.Printf("…") becomes {"level":"INFO","msg":"…"} instead of "2026/12/01 12:00:00 …".
// The std logger's own prefix and timestamp are dropped (the handler has its own time).
func Install(l *slog.Logger) {
	slog.SetDefault(l)
	log.SetFlags(0)
	log.SetPrefix("")
}

// StdLogger returns a *log.Logger that writes each line into l at level: for libraries that
// take a *log.Logger (net/http.Server.ErrorLog).
func StdLogger(l *slog.Logger, level slog.Level) *log.Logger {
	return slog.NewLogLogger(l.Handler(), level)
}
