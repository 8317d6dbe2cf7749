package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/authn/authntest"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/rest"
)

const (
	detailLabels = "Ana So. (K7Q2MX), Ana Si. (P3X9AB)"
	restToken    = "tok-rest"
	pickupCode   = "483921"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newDetailServer serves the REST API over a gate whose calls answer by capability: the
// check-in refuses an ambiguous "child" with a detail and otherwise issues a pick-up code; the
// check-out is a conflict with a detail. Each call logs its error as the server logs failed
// calls (Error()); the logs go to logs.
func newDetailServer(t *testing.T, logs io.Writer) *httptest.Server {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	call := func(id string) capability.Invoker {
		return func(ctx context.Context, _ capability.ScopeSet, args json.RawMessage) (any, error) {
			var in map[string]any
			_ = json.Unmarshal(args, &in)
			var err error
			switch {
			case id == "neemias_checkout_register":
				err = &errs.Conflict{Reason: "this adult may not pick the child up", Detail: "restriction: " + detailLabels}
			case in["child"] != nil:
				err = &errs.Invalid{Field: "child", Reason: "matches 2 children", Detail: detailLabels}
			default:
				return map[string]any{"checkin_id": uuid.NewString(), "pickup_code": pickupCode}, nil
			}
			logger.InfoContext(ctx, "capability refused", "capability", id, "error", err)
			return nil, err
		}
	}
	var entries []capability.Entry
	for _, e := range capapi.Catalog(capapi.UnimplementedHandler{}).All() {
		e.Scope, e.Invoke = "checkins:write", call(e.ID)
		entries = append(entries, e)
	}
	cat, err := capability.NewCatalog(nil, entries...)
	if err != nil {
		t.Fatal(err)
	}
	gate, err := pipeline.New(pipeline.Config{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	h, err := rest.New(rest.Options{
		Gate: gate,
		Edge: &httpx.Edge{
			Verifier: authntest.Static{Tokens: map[string]principal.Principal{restToken: {
				UserID: uuid.New(), ChurchID: uuid.New(), Role: "ADMIN", Scopes: capability.NewScopeSet("checkins:write"), ClientID: "test",
			}}},
			ResourceMetadataURL: "https://mcp.example.org/.well-known/oauth-protected-resource/mcp",
			Hosts:               httpx.LoopbackHosts(),
			Logger:              logger,
		},
		Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// postTool posts body to the tool's REST operation and returns the status and the body.
func postTool(t *testing.T, srv *httptest.Server, tool, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/tools/"+tool, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+restToken)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestErrorDetailShownNotLogged: a problem+json answer of an *errs.Invalid or *errs.Conflict
// carries the error's Detail after the reason; the server's logs, which record the error as
// Error() renders it, never do.
func TestErrorDetailShownNotLogged(t *testing.T) {
	logs := &syncBuffer{}
	srv := newDetailServer(t, logs)
	tests := []struct {
		name, tool, body string
		status           int
		detail           string // the problem's detail
		logged           string // what the log holds of the same error
	}{
		{"invalid", "neemias_checkin_register", `{"child":"Ana"}`, http.StatusBadRequest,
			"invalid input: child: matches 2 children: " + detailLabels, "invalid input: child: matches 2 children"},
		{"conflict", "neemias_checkout_register", `{"child":"Ana","pickup_code":"1234"}`, http.StatusConflict,
			"conflict: this adult may not pick the child up: restriction: " + detailLabels, "conflict: this adult may not pick the child up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := postTool(t, srv, tt.tool, tt.body)
			var p struct {
				Detail string `json:"detail"`
			}
			if err := json.Unmarshal([]byte(body), &p); err != nil || status != tt.status {
				t.Fatalf("status %d %s, want %d and a problem", status, body, tt.status)
			}
			if p.Detail != tt.detail {
				t.Errorf("problem detail\n%q\nwant\n%q", p.Detail, tt.detail)
			}
			if l := logs.String(); !strings.Contains(l, tt.logged) {
				t.Errorf("the logs do not record the error (%q): %s", tt.logged, l)
			}
		})
	}
	for _, leak := range []string{"K7Q2MX", "P3X9AB", "Ana So."} {
		if strings.Contains(logs.String(), leak) {
			t.Errorf("the logs carry the detail %q:\n%s", leak, logs.String())
		}
	}
}

// TestHandoffStaysInREST: a handoff field (the registry's check-in pickup_code) is an ordinary
// field over REST: a kiosk reads it in the JSON answer.
func TestHandoffStaysInREST(t *testing.T) {
	srv := newDetailServer(t, io.Discard)
	status, body := postTool(t, srv, "neemias_checkin_register", `{}`)
	var out map[string]any
	if err := json.Unmarshal([]byte(body), &out); err != nil || status != http.StatusOK || out["pickup_code"] != pickupCode {
		t.Errorf("status %d %s, want 200 with pickup_code %q", status, body, pickupCode)
	}
}
