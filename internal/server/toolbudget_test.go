package server_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/bench"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestToolOutputBudget: what the seed's questions cost the model that reads the answer, on the
// full demo church (the data `make run` serves: a busiest Sunday of about 200 children), as
// ADMIN and as VOLUNTARIO, over MCP 2026-07-28 with the official Go SDK client. Each answer's
// text and its structuredContent must each fit the question's budget in characters / 4 (a
// host hands the model one of them: docs/tool-output.md): a Sunday's lists 8,000 tokens, a
// count 1,000. The Sunday's lists name children and classes, never by UUID. It prints the
// table `make bench` records too (bench.MeasureToolCosts, bench.ToolQuestions), and writes it
// to $NEEMIAS_ARTIFACTS/tool-output.txt when that is set.
func TestToolOutputBudget(t *testing.T) {
	t.Parallel()
	st := storetest.NewSeeded(t, seed.Options{})
	a := newAppOn(t, st, server.Config{RateLimitOff: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fix, err := bench.LoadFixture(ctx, &bench.Database{Pool: st.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	if fix.BusiestCount < 190 {
		t.Fatalf("the demo's busiest Sunday has %d check-ins; this test is about a 200-child Sunday", fix.BusiestCount)
	}
	qs := bench.ToolQuestions(fix.BusiestDay, fix.MonthFrom, fix.MonthTo)
	costs, err := bench.MeasureToolCosts(ctx, a.mcp, map[string]string{"ADMIN": a.token(t, admin), "VOLUNTARIO": a.token(t, voluntario)},
		[]string{"ADMIN", "VOLUNTARIO"}, qs)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	bench.PrintToolCosts(&table, costs)
	t.Logf("busiest Sunday %s (%d check-ins), month %s..%s:\n%s", fix.BusiestDay.Format(time.DateOnly), fix.BusiestCount,
		fix.MonthFrom.Format(time.DateOnly), fix.MonthTo.Format(time.DateOnly), table.String())
	if dir := os.Getenv("NEEMIAS_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "tool-output.txt"), table.Bytes(), 0o644)
		}
	}

	// Every question is answered for ADMIN; VOLUNTARIO has all but child_find (no children:read).
	if want := 2*len(qs) - 1; len(costs) != want {
		t.Errorf("%d answers measured, want %d", len(costs), want)
	}
	for _, c := range costs {
		if !c.Within() {
			t.Errorf("%s as %s (%s): text %d tokens, structuredContent %d tokens; budget %d", c.Question, c.Role, c.Tool, c.TextTokens, c.StructuredTokens, c.Budget)
		}
		if c.TextChars == 0 || c.StructuredChars == 0 {
			t.Errorf("%s as %s: an empty answer (%d text, %d structured characters)", c.Question, c.Role, c.TextChars, c.StructuredChars)
		}
		if (c.Tool == "neemias_checkins_by_date" || c.Tool == "neemias_class_list") && c.IDsInText > 0 {
			t.Errorf("%s as %s: %d UUIDs in the text; a Sunday's lists name children by handle and label", c.Question, c.Role, c.IDsInText)
		}
	}
	// The Sunday's lists are long: the figures above measure the real thing.
	for _, c := range costs {
		if c.Role == "ADMIN" && c.Tool == "neemias_checkins_by_date" && c.TextTokens < 2000 {
			t.Errorf("the busiest Sunday's check-ins cost only %d tokens of text: is the list complete?", c.TextTokens)
		}
	}
}
