package logic_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestChildFindBudgetIsSharedByClientsAndReplicas (issue 24, finding 2): a user's searches by
// name have one budget, in PostgreSQL, whichever OAuth client or API key they come through and
// whichever replica serves them: two services over two pools of one database, each called
// through two clients of one user, allow logic.FindLimit.Burst searches between them, not four
// times as many; another user of the church keeps a budget of their own.
func TestChildFindBudgetIsSharedByClientsAndReplicas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	// A second replica: its own Service and its own pool, on the same database.
	st2, err := store.New(t.Context(), e.st.Pool().Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st2.Close)
	replicas := []*logic.Service{e.svc, logic.New(st2)}

	as := func(role, client string) context.Context {
		s, _ := scopes.RoleScopes(role)
		return principal.With(context.Background(), principal.Principal{
			UserID: a.users[role], ChurchID: a.id, Role: role, Scopes: s, ClientID: client,
		})
	}
	clients := []context.Context{as(store.RoleCadastro, "https://claude.ai/oauth/client"), as(store.RoleCadastro, "apikey:0b7c2a9e-kiosk")}
	allowed := 0
	var refusal error
	for i := range 4 * 15 {
		_, err := replicas[i%2].ChildFind(clients[(i/2)%2], &capapi.ChildFindInput{Name: "sentinela"})
		if err == nil {
			allowed++
			continue
		}
		refusal = err
	}
	var c *errs.Conflict
	if !errors.As(refusal, &c) || !strings.Contains(c.Reason, "too many searches") {
		t.Fatalf("refusal %v, want the search limit", refusal)
	}
	if want := logic.FindLimit.Burst; allowed != want {
		t.Errorf("%d searches allowed over 2 replicas × 2 clients of one user, want %d (one budget)", allowed, want)
	}
	if _, err := replicas[1].ChildFind(as(store.RoleAdmin, "https://claude.ai/oauth/client"), &capapi.ChildFindInput{Name: "sentinela"}); err != nil {
		t.Errorf("another user of the church: %v", err)
	}
}
