package httpx

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/time/rate"

	"github.com/neemias/neemias-mcp/internal/authn"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// TestOutageLogsOnceNotPerRequest: while the verifier cannot answer (the database is down),
// every request gets 503, and the log gets one warning per interval with the count of
// refusals, not an ERROR line per request.
func TestOutageLogsOnceNotPerRequest(t *testing.T) {
	unavailableLog = rate.NewLimiter(rate.Every(UnavailableLogInterval), 1)
	unavailableRefused.Store(0)
	var logs bytes.Buffer
	b := Bearer{
		Verifier: authn.VerifierFunc(func(context.Context, string) (principal.Principal, error) {
			return principal.Principal{}, errors.New("connect: connection refused")
		}),
		ResourceMetadataURL: "https://mcp.example/.well-known/oauth-protected-resource",
		Logger:              slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	h := b.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("reached the handler") }))
	for range 50 {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
		r.Header.Set("Authorization", "Bearer x")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
			t.Fatalf("status %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
		}
	}
	out := logs.String()
	if n := strings.Count(out, "token verification unavailable"); n != 1 {
		t.Errorf("%d outage lines for 50 refusals, want 1:\n%s", n, out)
	}
	if strings.Contains(out, "level=ERROR") {
		t.Errorf("an outage logged at ERROR:\n%s", out)
	}
	// The next line, once the interval has passed, carries the refusals since the first.
	if got := unavailableRefused.Load(); got != 49 {
		t.Errorf("%d refusals pending for the next line, want 49", got)
	}
}
