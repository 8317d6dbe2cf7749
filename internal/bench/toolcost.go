package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a tool result costs the model that reads it (issue 21, docs/tool-output.md): the
// characters of its text content and of its structuredContent, each divided by 4, the usual
// estimate of tokens. A host hands the model one of the two: Claude.ai, ChatGPT and the
// clients built on content read the text; Claude Code reads structuredContent when there is
// one. So each must fit the question's budget on its own; their sum is printed too.

// Tool-output budgets in tokens (characters / 4).
const (
	// BudgetSunday bounds what a 200-child Sunday's lists cost: who checked in, the class list.
	BudgetSunday = 8000
	// BudgetCount bounds a counting answer: "how many kids attended in June?".
	BudgetCount = 1000
)

// ToolQuestion is one of the seed's questions, asked as the tool call an agent makes for it.
type ToolQuestion struct {
	Question string         `json:"question"`
	Tool     string         `json:"tool"`
	Args     map[string]any `json:"args"`
	Budget   int            `json:"budget_tokens"`
}

// ToolQuestions are the questions a coordinator and a volunteer ask of the demo church: the
// busiest Sunday's check-ins and class list (about 200 children), one class of it, a month's
// attendance (the fixture's month), finding a child by first name, and the roster's counts.
func ToolQuestions(busiest, monthFrom, monthTo time.Time) []ToolQuestion {
	day := busiest.Format(time.DateOnly)
	month := monthFrom.Format("January 2006")
	return []ToolQuestion{
		{"Who checked in on " + day + "?", "neemias_checkins_by_date", map[string]any{"date": day}, BudgetSunday},
		{"The class list of " + day + " (first page)", "neemias_class_list", map[string]any{"date": day}, BudgetSunday},
		{"Who was in Jardim on " + day + "?", "neemias_class_list", map[string]any{"date": day, "class": "Jardim"}, BudgetSunday},
		{"How many kids attended in " + month + "?", "neemias_attendance_summary",
			map[string]any{"from": monthFrom.Format(time.DateOnly), "to": monthTo.Format(time.DateOnly)}, BudgetCount},
		{"Find Ana", "neemias_child_find", map[string]any{"name": "Ana"}, BudgetCount},
		{"How many kids are in each class?", "neemias_roster_children", map[string]any{}, BudgetCount},
	}
}

// ToolCost is what one question's answer cost one role.
type ToolCost struct {
	Role     string `json:"role"`
	Question string `json:"question"`
	Tool     string `json:"tool"`
	// TextChars and StructuredChars count characters (not bytes) of the text content and of
	// structuredContent as sent.
	TextChars        int `json:"text_chars"`
	StructuredChars  int `json:"structured_chars"`
	TextTokens       int `json:"text_tokens"`
	StructuredTokens int `json:"structured_tokens"`
	Budget           int `json:"budget_tokens"`
	// IDsInText counts the UUIDs in the text: ids a model reads but rarely passes on.
	IDsInText int `json:"ids_in_text"`
}

var uuidPattern = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// Within says both representations fit the budget.
func (c ToolCost) Within() bool { return c.TextTokens <= c.Budget && c.StructuredTokens <= c.Budget }

// tokens is the characters / 4 estimate, rounded up.
func tokens(chars int) int { return (chars + 3) / 4 }

// MeasureToolCosts asks every question over MCP 2026-07-28 (the official Go SDK client) as
// each role of tokens (role → bearer token), skipping the tools a role is not given
// (tools/list), and returns the costs in role, then question order. A tool that answers with
// an error is an error: a refusal costs nothing and would pass any budget.
func MeasureToolCosts(ctx context.Context, endpoint string, tokens map[string]string, roles []string, qs []ToolQuestion) ([]ToolCost, error) {
	var out []ToolCost
	for _, role := range roles {
		cs, err := connectAs(ctx, endpoint, tokens[role])
		if err != nil {
			return nil, fmt.Errorf("bench: tool costs as %s: %w", role, err)
		}
		listed := map[string]bool{}
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				cs.Close()
				return nil, fmt.Errorf("bench: tool costs as %s: tools/list: %w", role, err)
			}
			listed[tool.Name] = true
		}
		for _, q := range qs {
			if !listed[q.Tool] {
				continue
			}
			c, err := measureOne(ctx, cs, role, q)
			if err != nil {
				cs.Close()
				return nil, err
			}
			out = append(out, c)
		}
		cs.Close()
	}
	return out, nil
}

func measureOne(ctx context.Context, cs *sdk.ClientSession, role string, q ToolQuestion) (ToolCost, error) {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: q.Tool, Arguments: q.Args})
	if err != nil {
		return ToolCost{}, fmt.Errorf("bench: %s as %s: %w", q.Tool, role, err)
	}
	text, ids := 0, 0
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += utf8.RuneCountInString(tc.Text)
			ids += len(uuidPattern.FindAllStringIndex(tc.Text, -1))
		}
	}
	if res.IsError {
		return ToolCost{}, fmt.Errorf("bench: %s %v as %s answered an error", q.Tool, q.Args, role)
	}
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return ToolCost{}, fmt.Errorf("bench: %s as %s: structuredContent: %w", q.Tool, role, err)
	}
	structured := 0
	if res.StructuredContent != nil {
		structured = utf8.RuneCount(sc)
	}
	return ToolCost{Role: role, Question: q.Question, Tool: q.Tool, TextChars: text, StructuredChars: structured,
		TextTokens: tokens(text), StructuredTokens: tokens(structured), Budget: q.Budget, IDsInText: ids}, nil
}

// connectAs opens a stateless Go SDK client session on endpoint with a bearer token.
func connectAs(ctx context.Context, endpoint, token string) (*sdk.ClientSession, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "neemias-bench-toolcost", Version: "1"}, nil)
	hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	return client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc},
		&sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// PrintToolCosts writes the costs as a table, one line per role and question.
func PrintToolCosts(w io.Writer, costs []ToolCost) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "role\tquestion\ttool\ttext chars\ttext tokens\tids in text\tstructured chars\tstructured tokens\tsum tokens\tbudget\t")
	for _, c := range costs {
		mark := "within"
		if !c.Within() {
			mark = "OVER"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d %s\t\n", c.Role, c.Question, c.Tool, c.TextChars, c.TextTokens, c.IDsInText,
			c.StructuredChars, c.StructuredTokens, c.TextTokens+c.StructuredTokens, c.Budget, mark)
	}
	tw.Flush()
}

// toolCostGoal is met when every answer fits its budget.
func toolCostGoal(costs []ToolCost) Goal {
	const name = "tool output within budget (characters / 4: a Sunday's lists ≤ 8,000 tokens, counts ≤ 1,000; text and structuredContent each)"
	if len(costs) == 0 {
		return Goal{Name: name, Detail: "not measured"}
	}
	worst := slices.MaxFunc(costs, func(a, b ToolCost) int {
		ra := float64(max(a.TextTokens, a.StructuredTokens)) / float64(a.Budget)
		rb := float64(max(b.TextTokens, b.StructuredTokens)) / float64(b.Budget)
		switch {
		case ra < rb:
			return -1
		case ra > rb:
			return 1
		}
		return 0
	})
	met := !slices.ContainsFunc(costs, func(c ToolCost) bool { return !c.Within() })
	return Goal{Name: name, Met: met, Detail: fmt.Sprintf("closest: %s as %s, %d text / %d structured tokens of %d",
		worst.Question, worst.Role, worst.TextTokens, worst.StructuredTokens, worst.Budget)}
}
