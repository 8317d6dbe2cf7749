package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// TestGateFailsClosed: the one scope check. Every path that is not "a known capability, a
// verified caller holding its scope" is refused before the call runs; only a Forbidden is
// reported to the refusal hook, exactly once; Invoke without a permit, or with a permit for
// another capability on the context, runs nothing.
func TestGateFailsClosed(t *testing.T) {
	required := map[string]string{"read_thing": "things:read", "secret": "secrets:read"}
	var calls, refusals int
	var refused []error
	var entries []capability.Entry
	for _, id := range []string{"read_thing", "secret"} {
		entries = append(entries, capability.Entry{Capability: capability.Capability{ID: id, Scope: required[id]},
			Invoke: func(context.Context, capability.ScopeSet, json.RawMessage) (any, error) {
				calls++
				return map[string]string{"ran": id}, nil
			}})
	}
	cat, err := capability.NewCatalog([]capability.RoleScopes{{Role: "ADMIN", Scopes: []string{"things:read", "secrets:read"}}, {Role: "MEMBER", Scopes: []string{"things:read"}}}, entries...)
	if err != nil {
		t.Fatal(err)
	}
	var intercepted []string
	gate, err := pipeline.New(pipeline.Config{
		Catalog: cat,
		OnRefused: func(_ context.Context, _ string, _ json.RawMessage, err error) {
			refusals++
			refused = append(refused, err)
		},
		Interceptors: []pipeline.Interceptor{{Name: "count", Call: func(next pipeline.CallFunc) pipeline.CallFunc {
			return func(ctx context.Context, p pipeline.Permit, args json.RawMessage) (any, error) {
				intercepted = append(intercepted, p.Capability())
				return next(ctx, p, args)
			}
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	as := func(role string, scopes ...string) context.Context {
		return principal.With(context.Background(), principal.Principal{UserID: uuid.New(), ChurchID: uuid.New(), Role: role, Scopes: capability.NewScopeSet(scopes...)})
	}
	tests := []struct {
		name            string
		ctx             context.Context
		capability      string
		wantKind        errs.Kind // 0 with wantOK
		wantOK          bool
		wantRefusal     bool
		wantUnreachable bool
	}{
		{"holds the scope", as("MEMBER", "things:read"), "read_thing", 0, true, false, false},
		{"no caller on the context", context.Background(), "read_thing", errs.KindUnauthenticated, false, false, false},
		{"unknown capability", as("ADMIN", "things:read", "secrets:read"), "nope", errs.KindNotFound, false, false, false},
		{"unknown capability without a caller", context.Background(), "nope", errs.KindNotFound, false, false, false},
		{"missing scope the role can step up to", as("ADMIN", "things:read"), "secret", errs.KindForbidden, false, true, false},
		{"missing scope the role can never hold", as("MEMBER", "things:read"), "secret", errs.KindForbidden, false, true, true},
		{"no scopes at all", as("MEMBER"), "read_thing", errs.KindForbidden, false, true, false},
		{"unknown role", as("GHOST"), "read_thing", errs.KindForbidden, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, refusals, refused = 0, 0, nil
			res, err := gate.Call(tt.ctx, tt.capability, json.RawMessage(`{}`))
			if tt.wantOK {
				if err != nil || calls != 1 || string(res.JSON) != `{"ran":"`+tt.capability+`"}` || len(intercepted) == 0 {
					t.Fatalf("got %s, %v after %d calls; want the call to run once", res.JSON, err, calls)
				}
				return
			}
			if err == nil || errs.KindOf(err) != tt.wantKind || calls != 0 || res.JSON != nil {
				t.Fatalf("got %s, %v (kind %v) after %d calls; want kind %v and no call", res.JSON, err, errs.KindOf(err), calls, tt.wantKind)
			}
			if got := refusals == 1; got != tt.wantRefusal || refusals > 1 {
				t.Fatalf("refusal hook called %d times, want %v once", refusals, tt.wantRefusal)
			}
			var f *errs.Forbidden
			if tt.wantRefusal && (!errors.As(refused[0], &f) || f.Unreachable != tt.wantUnreachable || f.Scope != required[tt.capability]) {
				t.Errorf("hook got %#v, want a Forbidden for %s with Unreachable=%v", refused[0], required[tt.capability], tt.wantUnreachable)
			}
		})
	}

	t.Run("Invoke needs a permit", func(t *testing.T) {
		calls = 0
		if _, err := gate.Invoke(as("ADMIN", "things:read"), pipeline.Permit{}, nil); err == nil || calls != 0 {
			t.Fatalf("zero permit: %v after %d calls; want a refusal and no call", err, calls)
		}
		p, err := gate.Authorize(as("MEMBER", "things:read"), "read_thing", nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := pipeline.WithPermit(context.Background(), p)
		if _, ok := pipeline.PermitFrom(ctx, "secret"); ok {
			t.Error("a permit for read_thing was handed out for secret")
		}
		if got, ok := pipeline.PermitFrom(ctx, "read_thing"); !ok || got.Capability() != "read_thing" || !got.Valid() {
			t.Errorf("PermitFrom(read_thing) = %v, %v", got, ok)
		}
	})
}

// TestAliasIsWhatItRuns: a catalog alias (a view's app-only tool) is checked, invoked,
// intercepted and audited as the tool it runs: the permit, the interceptors and the refusal
// hook see the tool's id, never the alias's, and the tool's invoker runs.
func TestAliasIsWhatItRuns(t *testing.T) {
	var ran []string
	tool := capability.Entry{Capability: capability.Capability{ID: "do_thing", Name: "do_thing", Kind: capability.KindTool, Scope: "things:write", Title: "Do a thing"},
		Invoke: func(context.Context, capability.ScopeSet, json.RawMessage) (any, error) {
			ran = append(ran, "do_thing")
			return map[string]bool{"done": true}, nil
		}}
	cat, err := capability.NewCatalog(nil, tool)
	if err == nil {
		cat, err = cat.With(capability.Entry{Capability: capability.Capability{ID: "sheet_do_thing", Title: "From the sheet"}, Runs: "do_thing", View: "ui://x/sheet"})
	}
	if err != nil {
		t.Fatal(err)
	}
	var intercepted, refusedAs []string
	gate, err := pipeline.New(pipeline.Config{Catalog: cat,
		OnRefused: func(_ context.Context, id string, _ json.RawMessage, _ error) { refusedAs = append(refusedAs, id) },
		Interceptors: []pipeline.Interceptor{{Name: "labels", Call: func(next pipeline.CallFunc) pipeline.CallFunc {
			return func(ctx context.Context, p pipeline.Permit, args json.RawMessage) (any, error) {
				intercepted = append(intercepted, p.Capability())
				return next(ctx, p, args)
			}
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	as := func(scopes ...string) context.Context {
		return principal.With(context.Background(), principal.Principal{UserID: uuid.New(), ChurchID: uuid.New(), Role: "ADMIN", Scopes: capability.NewScopeSet(scopes...)})
	}
	if _, err := gate.Call(as("things:write"), "sheet_do_thing", nil); err != nil {
		t.Fatal(err)
	}
	if len(ran) != 1 || len(intercepted) != 1 || intercepted[0] != "do_thing" {
		t.Errorf("the alias ran %v, intercepted as %v; want the tool once, as do_thing", ran, intercepted)
	}
	var f *errs.Forbidden
	if _, err := gate.Authorize(as(), "sheet_do_thing", nil); !errors.As(err, &f) || f.Capability != "do_thing" || f.Scope != "things:write" {
		t.Errorf("refusal = %v; want Forbidden of do_thing for things:write", err)
	}
	gate.Refused(as(), "sheet_do_thing", nil, errors.New("app-only"))
	if len(refusedAs) != 2 || refusedAs[0] != "do_thing" || refusedAs[1] != "do_thing" {
		t.Errorf("refusals audited as %v; want do_thing twice", refusedAs)
	}
}
