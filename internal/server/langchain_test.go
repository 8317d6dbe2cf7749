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

// TestLangChainAdaptersCallTheReadTools: an agent built on LangChain (@langchain/mcp-adapters
// 1.1.4, pinned) loads the server's tools, the read tools among them, and answers "how many
// kids attended?" by calling neemias_attendance_summary itself: the model never has to read a
// resource.
func TestLangChainAdaptersCallTheReadTools(t *testing.T) {
	t.Parallel()
	node := nodeBin(t)
	a := newApp(t)
	from, to := a.one(t, `SELECT min(service_date)::text FROM checkins`), a.one(t, `SELECT max(service_date)::text FROM checkins`)
	total := a.one(t, `SELECT count(*)::text FROM checkins`)
	script, _ := filepath.Abs(filepath.Join(harness, "langchain-tools.mjs"))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, a.mcp, a.token(t, admin), from, to)
	cmd.Dir = harness
	out, err := cmd.Output()
	var rep struct {
		Tools      []string `json:"tools"`
		Attendance string   `json:"attendance"`
		Roster     string   `json:"roster"`
		Errors     []string `json:"errors"`
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		t.Fatalf("output is not JSON (%v; exit %v): %s", jerr, err, out)
	}
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("adapters failed (%v): %v", err, rep.Errors)
	}
	for _, want := range []string{"neemias_attendance_summary", "neemias_roster_children", "neemias_checkin_register"} {
		if !slices.ContainsFunc(rep.Tools, func(n string) bool { return n == want || strings.HasSuffix(n, "__"+want) }) {
			t.Errorf("tools %v lack %s", rep.Tools, want)
		}
	}
	if !strings.Contains(rep.Attendance, `"total_checkins":`+total) && !strings.Contains(rep.Attendance, `\"total_checkins\":`+total) {
		t.Errorf("attendance answer does not carry the %s check-ins of %s..%s: %.400s", total, from, to, rep.Attendance)
	}
	if !strings.Contains(rep.Roster, "total_children") {
		t.Errorf("roster answer: %.300s", rep.Roster)
	}
}
