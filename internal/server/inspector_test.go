package server_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInspectorCLIChecksInAndOut: the MCP Inspector's CLI mode (@modelcontextprotocol/inspector
// 1.0.3, pinned: `mcp-inspector --cli URL …`), typed as a person would, lists the tools, checks a child in and picks them up
// with the code it was given. The Inspector turns digit-only values into JSON numbers; the
// pick-up code has letters, so it stays the string it was.
func TestInspectorCLIChecksInAndOut(t *testing.T) {
	t.Parallel()
	node := nodeBin(t)
	a := newApp(t)
	tok := a.token(t, admin)
	kid := a.freeChildren(t, 1, false)[0]
	cli, _ := filepath.Abs(filepath.Join(harness, "node_modules", "@modelcontextprotocol", "inspector", "cli", "build", "cli.js"))
	run := func(args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{cli, "--cli", a.mcp, "--transport", "http", "--header", "Authorization: Bearer " + tok}, args...)...)
		cmd.Dir = harness
		out, err := cmd.Output()
		var v map[string]any
		if jerr := json.Unmarshal(out, &v); err != nil || jerr != nil {
			t.Fatalf("inspector %v: %v / %v: %s", args, err, jerr, out)
		}
		return v
	}
	list := run("--method", "tools/list")
	if b, _ := json.Marshal(list); !strings.Contains(string(b), `"neemias_checkins_by_date"`) || !strings.Contains(string(b), `"neemias_checkout_register"`) {
		t.Fatalf("tools/list: %s", b)
	}
	in := run("--method", "tools/call", "--tool-name", "neemias_checkin_register", "--tool-arg", "child_id="+kid)
	sc, _ := in["structuredContent"].(map[string]any)
	checkin, _ := sc["checkin_id"].(string)
	// The Inspector declares no MCP Apps: the code is in the text, once.
	var text string
	if content, _ := in["content"].([]any); len(content) > 0 {
		first, _ := content[0].(map[string]any)
		text, _ = first["text"].(string)
	}
	m := pickupCodeInText.FindStringSubmatch(text)
	if in["isError"] == true || m == nil || checkin == "" {
		t.Fatalf("check-in: %v", in)
	}
	code := m[1]
	guardian := a.one(t, `SELECT g.name FROM guardian_children gc JOIN guardians g ON g.id = gc.guardian_id
		WHERE gc.child_id = $1 ORDER BY g.name LIMIT 1`, kid)
	out := run("--method", "tools/call", "--tool-name", "neemias_checkout_register", "--tool-arg", "checkin_id="+checkin, "pickup_code="+code, "picked_up_by="+guardian)
	if out["isError"] == true {
		t.Fatalf("check-out with the code %s as the Inspector sends it: %v", code, out)
	}
	if n := a.one(t, `SELECT count(*) FROM checkins WHERE id = $1 AND checked_out_at IS NOT NULL`, checkin); n != "1" {
		t.Errorf("the check-out was not recorded")
	}
}
