package rest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/gen/openapi/oas"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/errs/errstest"
)

// TestEveryKindMapsOnREST: every error kind has its own status and code, and only an internal
// error carries a correlation id (and never the cause's text); each is an RFC 9457 problem
// with its kind's stable type URI.
func TestEveryKindMapsOnREST(t *testing.T) {
	r := &runner{o: Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	wants := map[errs.Kind]struct {
		status int
		code   oas.ErrorCode
	}{
		errs.KindInternal:        {http.StatusInternalServerError, oas.ErrorCodeInternal},
		errs.KindInvalid:         {http.StatusBadRequest, oas.ErrorCodeInvalidInput},
		errs.KindNotFound:        {http.StatusNotFound, oas.ErrorCodeNotFound},
		errs.KindUnauthenticated: {http.StatusUnauthorized, oas.ErrorCodeUnauthorized},
		errs.KindForbidden:       {http.StatusForbidden, oas.ErrorCodeForbidden},
		errs.KindConflict:        {http.StatusConflict, oas.ErrorCodeConflict},
		errs.KindNotImplemented:  {http.StatusNotImplemented, oas.ErrorCodeNotImplemented},
		errs.KindUnavailable:     {http.StatusServiceUnavailable, oas.ErrorCodeUnavailable},
	}
	for _, k := range errs.Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			err, ok := errstest.Sample(k), true
			w, ok2 := wants[k]
			if !ok || !ok2 {
				t.Fatalf("kind %v has no sample or expectation: add it", k)
			}
			got := r.NewError(context.Background(), err)
			if got.StatusCode != w.status || got.Response.Code != w.code {
				t.Errorf("got %d %s, want %d %s", got.StatusCode, got.Response.Code, w.status, w.code)
			}
			if strings.Contains(got.Response.Detail, "SECRET") {
				t.Errorf("detail leaks the cause: %q", got.Response.Detail)
			}
			// RFC 9457: a stable type per kind, the status repeated, a fixed title.
			if want := oas.ErrorType("urn:neemias:problem:" + string(w.code)); got.Response.Type != want || got.Response.Status != w.status || got.Response.Title == "" {
				t.Errorf("problem type %q status %d title %q; want %q %d and a title", got.Response.Type, got.Response.Status, got.Response.Title, want, w.status)
			}
			if err := got.Response.Validate(); err != nil {
				t.Errorf("the problem does not validate against the OpenAPI Error schema: %v", err)
			}
			if _, has := got.Response.CorrelationID.Get(); has != (k == errs.KindInternal) {
				t.Errorf("correlation id present = %v, want %v", has, k == errs.KindInternal)
			}
		})
	}
}
