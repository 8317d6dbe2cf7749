package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/store"
)

// churchFixture is one small church with a known shape, for the row-level security tests:
//
//	classes:   class1 (0-5), class2 (6-12)
//	users:     admin, cadastro, vol (assigned to class1), resp (the account of guardian g1)
//	children:  k1 (class1), k2 (class2), k3 (class1), k4 (no class) [, k5 (class1) when extra]
//	guardians: g1 (resp's) -> k1, k2;  g2 -> k2, k3, k4 [, k5]
//	consents:  one per child, by its first guardian
//	checkins:  k1, k2, k3 on day
//	audit_log: one entry by admin
type churchFixture struct {
	church                    uuid.UUID
	admin, cadastro, vol, res uuid.UUID
	class1, class2            uuid.UUID
	k1, k2, k3, k4, k5        uuid.UUID
	g1, g2                    uuid.UUID
	ck1, ck2, ck3             uuid.UUID
	day                       time.Time
}

func (f churchFixture) caller(role string) store.Caller {
	id := map[string]uuid.UUID{
		store.RoleAdmin: f.admin, store.RoleCadastro: f.cadastro,
		store.RoleVoluntario: f.vol, store.RoleResponsavel: f.res,
	}[role]
	granted, _ := scopes.RoleScopes(role)
	return store.Caller{ChurchID: f.church, UserID: id, Role: role, Scopes: granted}
}

var fixtureDay = time.Date(2026, 6, 7, 0, 0, 0, 0, time.UTC)

// newChurchFixture inserts a churchFixture in the maintenance context. extra adds child k5.
func newChurchFixture(t *testing.T, s *store.Store, slug string, extra bool) churchFixture {
	t.Helper()
	f := churchFixture{
		church: uuid.New(), admin: uuid.New(), cadastro: uuid.New(), vol: uuid.New(), res: uuid.New(),
		class1: uuid.New(), class2: uuid.New(),
		k1: uuid.New(), k2: uuid.New(), k3: uuid.New(), k4: uuid.New(),
		g1: uuid.New(), g2: uuid.New(),
		ck1: uuid.New(), ck2: uuid.New(), ck3: uuid.New(),
		day: fixtureDay,
	}
	if extra {
		f.k5 = uuid.New()
	}
	salt := make([]byte, 16)
	hash := store.HashPickupCode(salt, "123456")
	birth := func(years int) time.Time { return time.Now().UTC().AddDate(-years, 0, -10).Truncate(24 * time.Hour) }
	err := s.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		stmts := []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO churches (id, name, slug) VALUES ($1, 'Igreja Teste', $2)`, []any{f.church, slug}},
			{`INSERT INTO users (id, church_id, email, display_name, role) VALUES
				($2, $1, 'admin@' || $6, 'Admin', 'ADMIN'),
				($3, $1, 'cadastro@' || $6, 'Cadastro', 'CADASTRO'),
				($4, $1, 'vol@' || $6, 'Vol', 'VOLUNTARIO'),
				($5, $1, 'resp@' || $6, 'Resp', 'RESPONSAVEL')`,
				[]any{f.church, f.admin, f.cadastro, f.vol, f.res, slug + ".test"}},
			{`INSERT INTO classes (id, church_id, name, min_age, max_age) VALUES
				($2, $1, 'Pequenos', 0, 5), ($3, $1, 'Grandes', 6, 12)`, []any{f.church, f.class1, f.class2}},
			{`INSERT INTO volunteer_assignments (user_id, class_id, church_id) VALUES ($2, $3, $1)`,
				[]any{f.church, f.vol, f.class1}},
			{`INSERT INTO children (id, church_id, name, birth_date, class_id) VALUES
				($2, $1, 'Criança Um', $6, $7), ($3, $1, 'Criança Dois', $8, $9),
				($4, $1, 'Criança Três', $6, $7), ($5, $1, 'Criança Quatro', $8, NULL)`,
				[]any{f.church, f.k1, f.k2, f.k3, f.k4, birth(3), f.class1, birth(8), f.class2}},
			{`INSERT INTO guardians (id, church_id, user_id, name, phone) VALUES
				($2, $1, $4, 'Responsável Um', '+55 (00) 90000-0001'),
				($3, $1, NULL, 'Responsável Dois', '+55 (00) 90000-0002')`,
				[]any{f.church, f.g1, f.g2, f.res}},
			{`INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship) VALUES
				($2, $4, $1, 'mother'), ($2, $5, $1, 'mother'), ($3, $5, $1, 'father'),
				($3, $6, $1, 'father'), ($3, $7, $1, 'grandparent')`,
				[]any{f.church, f.g1, f.g2, f.k1, f.k2, f.k3, f.k4}},
			{`INSERT INTO consent_records (church_id, guardian_id, child_id, text_version, legal_basis, granted_by) VALUES
				($1, $2, $4, 'v1', 'consent', $8), ($1, $2, $5, 'v1', 'consent', $8),
				($1, $3, $6, 'v1', 'consent', $8), ($1, $3, $7, 'v1', 'legal_obligation', $8)`,
				[]any{f.church, f.g1, f.g2, f.k1, f.k2, f.k3, f.k4, f.cadastro}},
			{`INSERT INTO service_days (church_id, service_date) VALUES ($1, $2)`, []any{f.church, f.day}},
			{`INSERT INTO checkins (id, church_id, child_id, class_id, service_date, checked_in_by, pickup_code_salt, pickup_code_hash)
				VALUES ($2, $1, $5, $8, $10, $11, $12, $13), ($3, $1, $6, $9, $10, $11, $12, $13),
				       ($4, $1, $7, $8, $10, $11, $12, $13)`,
				[]any{f.church, f.ck1, f.ck2, f.ck3, f.k1, f.k2, f.k3, f.class1, f.class2, f.day, f.cadastro, salt, hash}},
			{`INSERT INTO audit_log (church_id, user_id, capability, action, outcome) VALUES ($1, $2, 'test', 'read', 'allowed')`,
				[]any{f.church, f.admin}},
		}
		if extra {
			stmts = append(stmts,
				struct {
					sql  string
					args []any
				}{`INSERT INTO children (id, church_id, name, birth_date, class_id) VALUES ($2, $1, 'Criança Cinco', $3, $4)`,
					[]any{f.church, f.k5, birth(2), f.class1}},
				struct {
					sql  string
					args []any
				}{`INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship) VALUES ($2, $3, $1, 'father')`,
					[]any{f.church, f.g2, f.k5}},
			)
		}
		for _, st := range stmts {
			if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return f
}
