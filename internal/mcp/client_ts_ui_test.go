package mcp_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// tsHarness is the npm harness with the pinned TypeScript clients.
const tsHarness = "conformance/testdata/harness"

// uiClientReport is what the harness's ui-client.mjs prints.
type uiClientReport struct {
	Declared        bool           `json:"declared"`
	Errors          []string       `json:"errors"`
	ServerExtension map[string]any `json:"serverExtensions"`
	Tools           []struct {
		Name string         `json:"name"`
		Meta map[string]any `json:"_meta"`
	} `json:"tools"`
	Resources []struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
	} `json:"resources"`
	Reads map[string]struct {
		Contents []struct {
			URI, MIMEType, TextPrefix string
		} `json:"contents"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"reads"`
	Wire struct {
		InitializeCapabilities map[string]any    `json:"initializeCapabilities"`
		IssuedSessionID        string            `json:"issuedSessionId"`
		Echoed                 map[string]string `json:"echoed"`
	} `json:"wire"`
}

// TestTypeScriptSDKClientUISession: the official TypeScript SDK 1.x client (the pinned
// @modelcontextprotocol/sdk 1.32.2, 2025-11-25 initialize) declaring
// extensions["io.modelcontextprotocol/ui"] with the view MIME type in its Client capabilities:
// the SDK sends the declaration unchanged in initialize (it does not strip extensions), is
// issued a UI session id, echoes it on every later request, and so sees the attendance tool's
// _meta.ui, the ui:// view in resources/list, and reads it as text/html;profile=mcp-app.
// Without the declaration it gets no session id and nothing about views appears: no _meta.ui,
// no ui:// resource, and reading the view's URI fails as an unknown resource (-32002).
func TestTypeScriptSDKClientUISession(t *testing.T) {
	node := testsupport.HarnessNode(t, tsHarness)
	srv := newServer(t, viewOptions())
	script, err := filepath.Abs(filepath.Join(tsHarness, "ui-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, ui bool) uiClientReport {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		args := []string{script, srv.URL + "/mcp", "--token", tokAdmin, "--read", chartURI}
		if ui {
			args = append(args, "--ui")
		}
		cmd := exec.CommandContext(ctx, node, args...)
		cmd.Dir = tsHarness
		out, err := cmd.Output()
		var rep uiClientReport
		if jerr := json.Unmarshal(out, &rep); jerr != nil || err != nil || len(rep.Errors) > 0 {
			t.Fatalf("ui-client.mjs (exit %v, %v): %s", err, jerr, out)
		}
		return rep
	}
	for _, ui := range []bool{true, false} {
		t.Run(map[bool]string{true: "declared", false: "not declared"}[ui], func(t *testing.T) {
			rep := run(t, ui)
			t.Logf("initialize capabilities %v, issued Mcp-Session-Id %q, echoed %v", rep.Wire.InitializeCapabilities, rep.Wire.IssuedSessionID, rep.Wire.Echoed)
			if _, ok := rep.ServerExtension[uiExt]; !ok {
				t.Errorf("the client does not see the server's %s extension: %v", uiExt, rep.ServerExtension)
			}
			ext, _ := rep.Wire.InitializeCapabilities["extensions"].(map[string]any)
			if _, sent := ext[uiExt]; sent != ui {
				t.Fatalf("initialize carried extensions[%s] = %v, want %v (capabilities %v)", uiExt, sent, ui, rep.Wire.InitializeCapabilities)
			}
			if got := strings.HasPrefix(rep.Wire.IssuedSessionID, uiSessionPrefix); got != ui || !ui && rep.Wire.IssuedSessionID != "" {
				t.Errorf("initialize's Mcp-Session-Id %q (declared %v)", rep.Wire.IssuedSessionID, ui)
			}
			for _, m := range []string{"tools/list", "resources/list", "resources/read"} {
				if got := rep.Wire.Echoed[m]; got != rep.Wire.IssuedSessionID {
					t.Errorf("%s echoed Mcp-Session-Id %q, want %q", m, got, rep.Wire.IssuedSessionID)
				}
			}

			var seen bool
			for _, tool := range rep.Tools {
				u, has := tool.Meta["ui"].(map[string]any)
				if tool.Name == "neemias_attendance_summary" {
					seen = true
					if has != ui || ui && u["resourceUri"] != chartURI {
						t.Errorf("attendance tool _meta %v (declared %v), want ui.resourceUri %s only when declared", tool.Meta, ui, chartURI)
					}
				} else if has {
					t.Errorf("tool %s has _meta.ui %v", tool.Name, u)
				}
			}
			if !seen {
				t.Fatalf("no neemias_attendance_summary in %+v", rep.Tools)
			}
			var listed []string
			for _, r := range rep.Resources {
				if strings.HasPrefix(r.URI, "ui://") {
					listed = append(listed, r.URI+" "+r.MIMEType)
				}
			}
			if want := map[bool]string{true: chartURI + " " + viewMIME, false: ""}[ui]; strings.Join(listed, ",") != want {
				t.Errorf("resources/list ui:// views %v, want %q", listed, want)
			}

			rd := rep.Reads[chartURI]
			switch {
			case ui && (rd.Error != nil || len(rd.Contents) != 1 || rd.Contents[0].MIMEType != viewMIME || rd.Contents[0].TextPrefix != "<!doctype html>"):
				t.Errorf("resources/read %s with the declaration: %+v", chartURI, rd)
			case !ui && (rd.Error == nil || rd.Error.Code != -32002 || len(rd.Contents) > 0):
				t.Errorf("resources/read %s without the declaration: %+v, want error -32002", chartURI, rd)
			}
		})
	}
}
