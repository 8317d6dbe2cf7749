package server_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// smokeReport is what the harness's client-smoke.mjs prints.
type smokeReport struct {
	OK                        bool             `json:"ok"`
	Errors                    []map[string]any `json:"errors"`
	NegotiatedProtocolVersion string           `json:"negotiatedProtocolVersion"`
	ProtocolEra               string           `json:"protocolEra"`
	SessionID                 *string          `json:"sessionId"`
	Tools                     []struct{ Name string }
	Resources                 []struct{ URI string }
	ResourceTemplates         []struct{ URITemplate string }
	Call                      struct {
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
			Content           []struct{ Text string }
		}
	}
	Read struct {
		Result struct {
			Contents []struct {
				URI      string `json:"uri"`
				MIMEType string `json:"mimeType"`
				Text     string `json:"text"`
			}
		}
	}
	HTTP []struct {
		Method          string `json:"method"`
		RPC             string `json:"rpc"`
		Status          int    `json:"status"`
		WWWAuthenticate string `json:"wwwAuthenticate"`
	} `json:"http"`
}

// runSmoke runs client-smoke.mjs with the pinned Node against url.
func runSmoke(t *testing.T, node string, args ...string) (smokeReport, string, error) {
	t.Helper()
	script, _ := filepath.Abs(filepath.Join(harness, "client-smoke.mjs"))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = harness
	out, err := cmd.Output()
	var rep smokeReport
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		t.Fatalf("client output is not JSON (%v; exit %v): %s", jerr, err, out)
	}
	return rep, string(out), err
}

// The official TypeScript clients against the real assembled server with a demo ADMIN token:
// SDK 1.32.2 (2025 era: initialize, 2025-11-25) and @modelcontextprotocol/client 2.x, pinned to
// 2026-07-28 and negotiating (it must pick 2026-07-28). Each lists tools, resources and
// templates, calls neemias_checkin_register and reads a child's record.
func TestTypeScriptClients(t *testing.T) {
	t.Parallel()
	node := nodeBin(t)
	a := newApp(t)
	token := a.token(t, admin)
	tests := []struct {
		name        string
		args        []string
		wantVersion string
		initialize  bool
	}{
		{"sdk 1.32.2", nil, "2025-11-25", true},
		{"client 2.x pinned to 2026-07-28", []string{"--sdk", "v2", "--negotiate", "2026-07-28"}, "2026-07-28", false},
		{"client 2.x negotiating", []string{"--sdk", "v2", "--negotiate", "auto"}, "2026-07-28", false},
	}
	kids := a.freeChildren(t, len(tests), false)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kid := kids[i]
			args := append([]string{a.mcp, "--token", token,
				"--call", "neemias_checkin_register", "--args", `{"child_id":"` + kid + `"}`,
				"--read", "neemias://roster/children/" + kid}, tc.args...)
			rep, out, err := runSmoke(t, node, args...)
			if err != nil || !rep.OK {
				t.Fatalf("client failed (%v): %v\n%s", err, rep.Errors, out)
			}
			if rep.NegotiatedProtocolVersion != tc.wantVersion {
				t.Errorf("negotiated %q, want %q", rep.NegotiatedProtocolVersion, tc.wantVersion)
			}
			if rep.SessionID != nil && *rep.SessionID != "" {
				t.Errorf("the server issued session id %q", *rep.SessionID)
			}
			sentInit := false
			for _, h := range rep.HTTP {
				sentInit = sentInit || h.RPC == "initialize"
				// SDK 1.32.2 also tries the optional GET stream, which a stateless server
				// refuses with 405 (as the transport allows).
				if h.Status != 200 && h.Status != 202 && !(h.Method == "GET" && h.Status == 405) {
					t.Errorf("%s %s answered HTTP %d", h.Method, h.RPC, h.Status)
				}
			}
			if sentInit != tc.initialize {
				t.Errorf("initialize sent = %v, want %v", sentInit, tc.initialize)
			}
			var tools, resources, templates []string
			for _, x := range rep.Tools {
				tools = append(tools, x.Name)
			}
			for _, x := range rep.Resources {
				resources = append(resources, x.URI)
			}
			for _, x := range rep.ResourceTemplates {
				templates = append(templates, x.URITemplate)
			}
			slices.Sort(tools)
			slices.Sort(templates)
			if want := roleTools(admin.role); !slices.Equal(tools, want) {
				t.Errorf("tools = %v, want %v", tools, want)
			}
			if !slices.Equal(resources, []string{"neemias://roster/children"}) || !slices.Equal(templates, roleTemplates(admin.role)) {
				t.Errorf("resources = %v, templates = %v", resources, templates)
			}
			sc := rep.Call.Result.StructuredContent
			// No MCP Apps: the pick-up code is in the text once, never in structuredContent.
			if rep.Call.Result.IsError || sc["child_id"] != kid || sc["pickup_code"] != nil || len(rep.Call.Result.Content) != 1 ||
				!strings.Contains(rep.Call.Result.Content[0].Text, kid) || pickupCodeInText.FindStringSubmatch(rep.Call.Result.Content[0].Text) == nil {
				t.Errorf("check-in result = %+v", rep.Call.Result)
			}
			if c := rep.Read.Result.Contents; len(c) != 1 || c[0].MIMEType != "application/json" || !strings.Contains(c[0].Text, `"child_id":"`+kid+`"`) {
				t.Errorf("read result = %+v", rep.Read.Result)
			}
		})
	}
	if n := a.one(t, `SELECT count(*)::text FROM checkins WHERE child_id = ANY($1::uuid[])
		AND service_date = (now() AT TIME ZONE 'America/Sao_Paulo')::date`, kids); n != "3" {
		t.Errorf("%s check-ins registered, want 3", n)
	}
}

// Without a token the TypeScript client meets the RFC 6750 challenge with the RFC 9728
// metadata URL.
func TestTypeScriptClientWithoutToken(t *testing.T) {
	t.Parallel()
	node := nodeBin(t)
	a := newApp(t)
	rep, out, _ := runSmoke(t, node, a.mcp)
	if rep.OK || len(rep.HTTP) == 0 {
		t.Fatalf("an unauthenticated client succeeded: %s", out)
	}
	h := rep.HTTP[0]
	if h.Status != 401 || !strings.Contains(h.WWWAuthenticate, `resource_metadata="`+a.base+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("first exchange: %d %q", h.Status, h.WWWAuthenticate)
	}
}
