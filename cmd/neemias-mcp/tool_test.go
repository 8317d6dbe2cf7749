package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestToolCommand: `neemias-mcp tool` runs the spec's tools through the server's pipeline as
// a church's account, with its role's scopes: key=value pairs typed by the input schema (dotted
// keys for objects) or --json, the structured result printed as JSON, the call audited as the
// account through client neemias-mcp-cli; refusals (a role without the scope, bad input, an
// unknown tool, input or account) are errors that say why, and write nothing.
func TestToolCommand(t *testing.T) {
	st := storetest.NewSeeded(t, seed.Options{ChildrenPerChurch: 6, Months: 1})
	dbURL := st.Pool().Config().ConnString()
	run := func(args ...string) (string, error) {
		t.Helper()
		var out bytes.Buffer
		cmd := root()
		cmd.SetOut(&out)
		cmd.SetErr(io.Discard)
		cmd.SetArgs(append(append([]string{"tool"}, args...), "--database-url", dbURL))
		err := cmd.Execute()
		return out.String(), err
	}
	as := func(email string, args ...string) []string {
		return append(args, "--church", seed.DemoChurchSlug, "--as", email)
	}
	one := func(sql string, args ...any) string {
		t.Helper()
		var s string
		if err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, sql, args...).Scan(&s)
		}); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return s
	}
	decode := func(t *testing.T, out string) map[string]any {
		t.Helper()
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("not a JSON object: %v\n%s", err, out)
		}
		return v
	}
	child := one(`SELECT id::text FROM children WHERE church_id = $1 AND archived_at IS NULL ORDER BY id LIMIT 1`, seed.DemoChurchID)
	entries := func() string { return one(`SELECT count(*)::text FROM audit_log`) }

	out, err := run("--list")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"neemias_child_correct", "neemias_guardian_correct", "neemias_child_merge", "neemias_guardian_merge", "neemias_consent_revoke"} {
		if !regexp.MustCompile(`(?m)^` + tool + `\s+children:write\s+ADMIN,CADASTRO\s+\S`).MatchString(out) {
			t.Errorf("--list lacks %s for ADMIN and CADASTRO:\n%s", tool, out)
		}
	}
	if !strings.Contains(out, "neemias_roster_children") {
		t.Errorf("--list lacks the read tools:\n%s", out)
	}

	t.Run("key=value", func(t *testing.T) {
		out, err := run(as(seed.DemoCadastroEmail, "neemias_child_correct", "child_id="+child, "allergies=leite de vaca")...)
		if err != nil {
			t.Fatal(err)
		}
		if v := decode(t, out); v["child_id"] != child || len(v["changed"].([]any)) != 1 || v["changed"].([]any)[0] != "allergies" {
			t.Errorf("output %v", v)
		}
		if got := one(`SELECT allergies FROM children WHERE id = $1`, child); got != "leite de vaca" {
			t.Errorf("allergies %q", got)
		}
		au := one(`SELECT concat_ws('|', user_id, client_id, action, outcome) FROM audit_log ORDER BY id DESC LIMIT 1`)
		if want := seed.DemoCadastroID.String() + "|" + audit.OperatorClientID + "|child_correct:allergies|allowed"; au != want {
			t.Errorf("audit %s, want %s", au, want)
		}
	})
	var newChild string
	t.Run("dotted keys, typed values, then a merge", func(t *testing.T) {
		birth := time.Now().AddDate(-4, 0, -2).Format(time.DateOnly)
		out, err := run(as(seed.DemoAdminEmail, "neemias_child_enroll", "name=Criança Da Linha De Comando", "birth_date="+birth,
			"guardian.name=Mãe Da Linha", "guardian.phone=+55 11 91234-0099", "guardian.relationship=mother",
			"consent.granted=true", "consent.text_version=2026-01", "consent.legal_basis=consent")...)
		if err != nil {
			t.Fatal(err)
		}
		newChild, _ = decode(t, out)["child_id"].(string)
		if _, err := uuid.Parse(newChild); err != nil {
			t.Fatalf("enroll output %s", out)
		}
		out, err = run(as(seed.DemoAdminEmail, "neemias_child_merge", "--json", `{"survivor_id":"`+child+`","duplicate_id":"`+newChild+`"}`)...)
		if err != nil {
			t.Fatal(err)
		}
		if v := decode(t, out); v["duplicate_id"] != newChild || v["consents_moved"] != 1.0 || v["guardians_linked"] != 1.0 {
			t.Errorf("merge output %v", v)
		}
		if n := one(`SELECT count(*)::text FROM children WHERE id = $1`, newChild); n != "0" {
			t.Error("the duplicate is still there")
		}
	})
	t.Run("a read tool, compact", func(t *testing.T) {
		out, err := run(as(seed.DemoVoluntarioEmail, "neemias_roster_children", "--compact")...)
		if err != nil || strings.Count(out, "\n") != 1 {
			t.Fatalf("%v\n%s", err, out)
		}
		if _, ok := decode(t, out)["total_children"]; !ok {
			t.Errorf("output %s", out)
		}
	})

	before := one(`SELECT concat_ws('|', allergies, medical_notes, birth_date, consent_revoked_at) FROM children WHERE id = $1`, child)
	for _, tc := range []struct {
		name   string
		args   []string
		says   string
		denied bool // audited as a refusal
	}{
		{"a volunteer", as(seed.DemoVoluntarioEmail, "neemias_consent_revoke", "child_id="+child),
			"neemias_consent_revoke: role VOLUNTARIO may not call it (it needs scope children:write)", true},
		{"a guardian", as(seed.DemoResponsavelEmail, "neemias_child_correct", "child_id="+child, "allergies=x"),
			"role RESPONSAVEL may not call it", true},
		{"a birth date in the future", as(seed.DemoAdminEmail, "neemias_child_correct", "child_id="+child, "birth_date="+time.Now().AddDate(0, 0, 3).Format(time.DateOnly)),
			"neemias_child_correct refused: invalid input: birth_date: is in the future", true},
		{"a merge into itself", as(seed.DemoAdminEmail, "neemias_child_merge", "survivor_id="+child, "duplicate_id="+child),
			"duplicate_id: is the survivor itself", true},
		{"a wrong boolean", as(seed.DemoAdminEmail, "neemias_child_enroll", "consent.granted=sim"), "consent.granted must be true or false", false},
		{"an unknown input", as(seed.DemoAdminEmail, "neemias_child_correct", "child_id="+child, "nome=x"),
			`"nome" is not an input of the tool; its inputs: allergies, birth_date, child_id, class_id, medical_notes, name`, false},
		{"an unknown member", as(seed.DemoAdminEmail, "neemias_child_enroll", "guardian.fone=1"), `"guardian.fone" is not an input of "guardian"`, false},
		{"not key=value", as(seed.DemoAdminEmail, "neemias_child_correct", "child_id"), `argument "child_id" is not key=value`, false},
		{"bad --json", as(seed.DemoAdminEmail, "neemias_child_correct", "--json", "[1]"), "--json must be one JSON object", false},
		{"an unknown tool", as(seed.DemoAdminEmail, "neemias_child_corect"), `unknown tool "neemias_child_corect"`, false},
		{"an unknown account", as("ninguem@demo.neemias.test", "neemias_child_correct", "child_id="+child), `--as: church "demo" has no account`, false},
		{"no account", []string{"neemias_child_correct", "child_id=" + child}, "--church and --as are required", false},
	} {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			n := entries()
			out, err := run(tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want it to say %q (output %q)", err, tc.says, out)
			}
			if out != "" {
				t.Errorf("a refusal printed %q", out)
			}
			if grew := entries() != n; grew != tc.denied {
				t.Errorf("audited: %v, want %v", grew, tc.denied)
			}
		})
	}
	if after := one(`SELECT concat_ws('|', allergies, medical_notes, birth_date, consent_revoked_at) FROM children WHERE id = $1`, child); after != before {
		t.Errorf("a refusal changed the child: %s -> %s", before, after)
	}
	out, err = run(as(seed.DemoAdminEmail, "neemias_consent_revoke", "child_id="+child)...)
	if err != nil {
		t.Fatal(err)
	}
	if v := decode(t, out); v["listed"] != false {
		t.Errorf("revoke output %v", v)
	}
}
