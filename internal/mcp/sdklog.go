package mcp

import (
	"context"
	"log/slog"
)

// sdkLogger is the logger handed to the go-sdk: the server's own, with records below Warn
// dropped. Stateless, every request is a "session" of its own, and the SDK logs three Info lines
// for each ("server connecting", "server session connected", "… disconnected") that carry
// nothing (the session id is empty); its warnings and errors still come through.
func sdkLogger(l *slog.Logger) *slog.Logger {
	return slog.New(minLevel{Handler: l.Handler(), min: slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: m.Handler.WithAttrs(as), min: m.min}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: m.Handler.WithGroup(name), min: m.min}
}
