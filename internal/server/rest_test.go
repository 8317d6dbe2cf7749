package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/scopes"
)

// restCall sends one request to the real server and returns the status, headers and body.
func restCall(t *testing.T, method, url, token, body string) (int, http.Header, string) {
	t.Helper()
	h := http.Header{}
	if body != "" {
		h.Set("Content-Type", "application/json")
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return edgeCall(t, method, url, h, body)
}

func decodeObject(t *testing.T, what, body string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%s: body is not a JSON object (%v): %s", what, err, body)
	}
	return v
}

// The REST view (/api/v1, ogen) of the assembled server: the same tokens, scopes and errors as
// MCP, with RFC 6750 challenges.
func TestRESTSmoke(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	api := a.base + "/api/v1"
	adminTok := a.token(t, admin)
	metadata := a.base + "/.well-known/oauth-protected-resource/mcp"
	kid := a.freeChildren(t, 1, false)[0]

	t.Run("roster with a token", func(t *testing.T) {
		status, h, body := restCall(t, "GET", api+"/roster/children", adminTok, "")
		if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Fatalf("GET roster: %d %s %s", status, h.Get("Content-Type"), body)
		}
		v := decodeObject(t, "roster", body)
		if n, _ := v["total_children"].(float64); n < 1 {
			t.Errorf("roster = %s", body)
		}
	})

	t.Run("no token", func(t *testing.T) {
		status, h, body := restCall(t, "GET", api+"/roster/children", "", "")
		www := h.Get("WWW-Authenticate")
		// RFC 6750 §3.1: no error code when no credentials were sent.
		if status != 401 || !strings.HasPrefix(www, "Bearer ") || strings.Contains(www, `error=`) ||
			!strings.Contains(www, `resource_metadata="`+metadata+`"`) {
			t.Errorf("no token: %d, WWW-Authenticate %q", status, www)
		}
		if v := decodeObject(t, "401", body); v["code"] != "unauthorized" {
			t.Errorf("401 body = %s", body)
		}
	})

	t.Run("bad token", func(t *testing.T) {
		status, h, _ := restCall(t, "GET", api+"/roster/children", adminTok+"x", "")
		if status != 401 || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("bad token: %d, WWW-Authenticate %q", status, h.Get("WWW-Authenticate"))
		}
	})

	t.Run("guardian on roster: the role never holds it, so no step-up", func(t *testing.T) {
		status, h, body := restCall(t, "GET", api+"/roster/children", a.token(t, responsavel), "")
		if www := h.Get("WWW-Authenticate"); status != 403 || www != "" {
			t.Errorf("guardian on roster: %d, WWW-Authenticate %q, %s; want 403 without a challenge", status, www, body)
		}
		if v := decodeObject(t, "403", body); v["code"] != "forbidden" {
			t.Errorf("403 body = %s", body)
		}
	})

	t.Run("volunteer token without roster:read: step-up keeping the scopes held", func(t *testing.T) {
		status, h, body := restCall(t, "GET", api+"/roster/children", a.token(t, voluntario, "checkins:read"), "")
		www := h.Get("WWW-Authenticate")
		if status != 403 || !strings.Contains(www, `error="insufficient_scope"`) || !strings.Contains(www, `scope="checkins:read roster:read"`) ||
			!strings.Contains(www, `resource_metadata="`+metadata+`"`) {
			t.Errorf("step-up: %d, WWW-Authenticate %q, %s", status, www, body)
		}
		if v := decodeObject(t, "403", body); v["code"] != "forbidden" || !strings.Contains(body, scopes.RosterRead) {
			t.Errorf("403 body = %s, want it to name %s", body, scopes.RosterRead)
		}
	})

	t.Run("bad uuid", func(t *testing.T) {
		status, _, body := restCall(t, "GET", api+"/roster/children/not-a-uuid", adminTok, "")
		v := decodeObject(t, "400", body)
		if status != 400 || v["code"] != "invalid_input" || v["field"] != "id" {
			t.Errorf("bad uuid: %d %s, want 400 invalid_input naming id", status, body)
		}
		if strings.Contains(body, "not-a-uuid") {
			t.Errorf("the 400 echoes the input: %s", body)
		}
		status, _, body = restCall(t, "GET", api+"/attendance/summary?from=junk", adminTok, "")
		if v := decodeObject(t, "400", body); status != 400 || v["field"] != "from" {
			t.Errorf("bad query parameter: %d %s, want 400 naming from", status, body)
		}
		status, _, body = restCall(t, "GET", api+"/checkins/2026-13-45", adminTok, "")
		if v := decodeObject(t, "400", body); status != 400 || v["field"] != "date" {
			t.Errorf("bad date: %d %s, want 400 naming date", status, body)
		}
	})

	t.Run("unknown child", func(t *testing.T) {
		status, _, body := restCall(t, "GET", api+"/roster/children/"+uuid.NewString(), adminTok, "")
		if v := decodeObject(t, "404", body); status != 404 || v["code"] != "not_found" {
			t.Errorf("unknown child: %d %s", status, body)
		}
	})

	t.Run("child record", func(t *testing.T) {
		status, _, body := restCall(t, "GET", api+"/roster/children/"+kid, adminTok, "")
		if v := decodeObject(t, "child", body); status != 200 || v["child_id"] != kid {
			t.Errorf("child: %d %s", status, body)
		}
		// Child records need children:read, which guardians do not hold (the spec's seed
		// decision): refused by scope before any row is read, whoever's child it is.
		status, _, body = restCall(t, "GET", api+"/roster/children/"+kid, a.token(t, responsavel), "")
		if status != 403 || !strings.Contains(string(body), "children:read") {
			t.Errorf("a child record as guardian: %d %s, want 403 naming children:read", status, body)
		}
	})

	t.Run("check-in tool", func(t *testing.T) {
		url := api + "/tools/neemias_checkin_register"
		status, _, body := restCall(t, "POST", url, adminTok, `{"child_id":"`+kid+`"}`)
		first := decodeObject(t, "check-in", body)
		if status != 200 || first["child_id"] != kid || first["pickup_code"] == nil || first["already_checked_in"] != false {
			t.Fatalf("check-in: %d %s", status, body)
		}
		status, _, body = restCall(t, "POST", url, adminTok, `{"child_id":"`+kid+`"}`)
		if again := decodeObject(t, "retry", body); status != 200 || again["checkin_id"] != first["checkin_id"] || again["already_checked_in"] != true || again["pickup_code"] != nil {
			t.Errorf("retry: %d %s", status, body)
		}
		status, _, body = restCall(t, "POST", url, adminTok, `{"child_id":"nope"}`)
		if status != 400 || !strings.Contains(body, "invalid_input") {
			t.Errorf("bad body: %d %s", status, body)
		}
		status, _, body = restCall(t, "POST", url, adminTok, `{"child_id":"`+kid+`","service_date":"2999-01-01"}`)
		if v := decodeObject(t, "future", body); status != 400 || v["field"] != "service_date" {
			t.Errorf("future day: %d %s", status, body)
		}
		// The demo guardian may not check in another family's child: not found.
		status, _, body = restCall(t, "POST", url, a.token(t, responsavel), `{"child_id":"`+kid+`"}`)
		if status != 404 {
			t.Errorf("guardian checking in another family's child: %d %s", status, body)
		}
	})
}

// RFC 9728 protected resource metadata at both well-known paths: resource is the canonical MCP
// URL (ResourceURL, the tokens' audience).
func TestProtectedResourceMetadata(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	if a.srv.ResourceURL != a.mcp {
		t.Errorf("ResourceURL = %q, want %q", a.srv.ResourceURL, a.mcp)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		status, h, body := restCall(t, "GET", a.base+path, "", "")
		if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s", path, status, h.Get("Content-Type"))
		}
		var md struct {
			Resource               string   `json:"resource"`
			AuthorizationServers   []string `json:"authorization_servers"`
			ScopesSupported        []string `json:"scopes_supported"`
			BearerMethodsSupported []string `json:"bearer_methods_supported"`
		}
		if err := json.Unmarshal([]byte(body), &md); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if md.Resource != a.srv.ResourceURL || len(md.AuthorizationServers) == 0 || md.AuthorizationServers[0] != a.base {
			t.Errorf("%s: %s", path, body)
		}
		if len(md.ScopesSupported) != len(scopes.All()) || strings.Join(md.BearerMethodsSupported, ",") != "header" {
			t.Errorf("%s: scopes %v, bearer methods %v", path, md.ScopesSupported, md.BearerMethodsSupported)
		}
	}
	// The MCP endpoint's own challenge points at that metadata.
	status, h, _ := restCall(t, "POST", a.mcp, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if www := h.Get("WWW-Authenticate"); status != 401 || !strings.Contains(www, `resource_metadata="`+a.base+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("MCP without token: %d %q", status, www)
	}
	// Health.
	if status, _, body := restCall(t, "GET", a.base+"/healthz", "", ""); status != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", status, body)
	}
}
