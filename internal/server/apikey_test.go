package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/apikey"
	"github.com/neemias/neemias-mcp/internal/seed"
)

// TestAPIKeys: a church API key works on REST within its scopes, is refused on MCP with a 401
// that says MCP needs OAuth, and is refused once revoked or once its account is disabled;
// REST errors are RFC 9457 problems; calls are audited under the key's client id.
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := context.Background()
	k, key, err := apikey.Create(ctx, a.st, apikey.New{Church: seed.DemoChurchID, User: seed.DemoCadastroID, Name: "n8n", Scopes: []string{"roster:read"}})
	if err != nil {
		t.Fatal(err)
	}
	_, other, err := apikey.Create(ctx, a.st, apikey.New{Church: seed.DemoChurchID, User: seed.DemoVoluntarioID, Name: "sheet"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := apikey.Create(ctx, a.st, apikey.New{Church: seed.DemoChurchID, User: seed.DemoVoluntarioID, Name: "x", Scopes: []string{"children:write"}}); err == nil {
		t.Error("a key was created with a scope beyond the account's role")
	}
	api := a.base + "/api/v1"
	problem := func(t *testing.T, hdr http.Header, body, wantType string) {
		t.Helper()
		var p map[string]any
		if hdr.Get("Content-Type") != "application/problem+json" || json.Unmarshal([]byte(body), &p) != nil || p["type"] != wantType || p["title"] == "" || p["status"] == nil {
			t.Errorf("want an RFC 9457 problem of type %s, got %s %s", wantType, hdr.Get("Content-Type"), body)
		}
	}

	if status, _, body := restCall(t, "GET", api+"/roster/children", key, ""); status != http.StatusOK || !strings.Contains(body, "total_children") {
		t.Errorf("REST with the key: %d %s", status, body)
	}
	status, hdr, body := restCall(t, "POST", api+"/tools/neemias_checkin_register", key, `{"child_id":"`+seed.DemoChurchID.String()+`"}`)
	if status != http.StatusForbidden {
		t.Errorf("REST beyond the key's scopes: %d %s", status, body)
	}
	problem(t, hdr, body, "urn:neemias:problem:forbidden")
	status, hdr, body = restCall(t, "GET", api+"/roster/children", "nmk_0000_garbage", "")
	if status != http.StatusUnauthorized {
		t.Errorf("a malformed key: %d", status)
	}
	problem(t, hdr, body, "urn:neemias:problem:unauthorized")

	mcpStatus, mcpHdr, mcpBody := edgeCall(t, "POST", a.mcp, modernHeader(key, "tools/list", ""),
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if mcpStatus != http.StatusUnauthorized || !strings.Contains(mcpHdr.Get("WWW-Authenticate"), "MCP needs OAuth") ||
		!strings.Contains(mcpHdr.Get("WWW-Authenticate"), "resource_metadata=") || !strings.Contains(mcpBody, "MCP needs OAuth") {
		t.Errorf("MCP with an API key: %d %q %s", mcpStatus, mcpHdr.Get("WWW-Authenticate"), mcpBody)
	}

	if n := a.one(t, `SELECT count(*)::text FROM audit_log WHERE client_id = $1 AND user_id = $2`, apikey.ClientPrefix+k.ID.String(), seed.DemoCadastroID); n == "0" {
		t.Errorf("the key's calls are not audited under its client id")
	}
	if ok, err := apikey.Revoke(ctx, a.st, seed.DemoChurchID, k.ID); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if status, _, _ := restCall(t, "GET", api+"/roster/children", key, ""); status != http.StatusUnauthorized {
		t.Errorf("a revoked key: %d", status)
	}
	if status, _, _ := restCall(t, "GET", api+"/checkins/2026-01-01", other, ""); status != http.StatusOK {
		t.Errorf("the volunteer's key: %d", status)
	}
	a.exec(t, `UPDATE users SET disabled_at = now() WHERE id = $1`, seed.DemoVoluntarioID)
	if status, _, _ := restCall(t, "GET", api+"/checkins/2026-01-01", other, ""); status != http.StatusUnauthorized {
		t.Errorf("a key of a disabled account: %d", status)
	}
	if n := a.one(t, `SELECT count(*)::text FROM api_keys WHERE secret_hash = convert_to($1, 'UTF8')`, key); n != "0" {
		t.Errorf("the key is stored in clear")
	}
}

// TestOpenAPIDocument: /api/openapi.json is the generated document: both credentials, every
// operation accepting either, and the Error object as an RFC 9457 problem.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	status, hdr, body := restCall(t, "GET", a.base+"/api/openapi.json", "", "")
	if status != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("/api/openapi.json: %d %s", status, hdr.Get("Content-Type"))
	}
	var doc struct {
		Paths      map[string]map[string]struct{ Security []map[string][]string }
		Components struct {
			SecuritySchemes map[string]map[string]any
			Schemas         map[string]struct {
				Required   []string
				Properties map[string]any
			}
			Responses map[string]struct{ Content map[string]any }
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Components.SecuritySchemes["oauth2"]["type"] != "oauth2" || doc.Components.SecuritySchemes["apiKey"]["scheme"] != "bearer" {
		t.Errorf("security schemes: %v", doc.Components.SecuritySchemes)
	}
	ops := 0
	for p, methods := range doc.Paths {
		for m, op := range methods {
			ops++
			var names []string
			for _, s := range op.Security {
				for n := range s {
					names = append(names, n)
				}
			}
			if len(names) != 2 {
				t.Errorf("%s %s security %v: want oauth2 or apiKey", m, p, op.Security)
			}
		}
	}
	errSchema := doc.Components.Schemas["Error"]
	for _, f := range []string{"type", "title", "status", "detail", "code"} {
		if _, ok := errSchema.Properties[f]; !ok {
			t.Errorf("the Error schema lacks %s", f)
		}
	}
	if _, ok := doc.Components.Responses["Error"].Content["application/problem+json"]; !ok || ops < 5 {
		t.Errorf("error responses are not application/problem+json (or only %d operations)", ops)
	}
}
