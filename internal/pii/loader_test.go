package pii

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

func TestLoaderReadsOneChurch(t *testing.T) {
	s := storetest.New(t)
	ctx := context.Background()
	pool := s.Pool()
	a, b := uuid.New(), uuid.New()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`INSERT INTO churches (id, name, slug) VALUES ($1, 'Igreja A', 'igreja-a'), ($2, 'Igreja B', 'igreja-b')`, a, b)
	exec(`INSERT INTO children (church_id, name, birth_date) VALUES ($1, 'Beatriz Nogueira Prado', '2018-07-09')`, a)
	exec(`INSERT INTO children (church_id, name, birth_date, archived_at) VALUES ($1, 'Otávio Brandão', '2017-01-02', now())`, a)
	exec(`INSERT INTO guardians (church_id, name, phone) VALUES ($1, 'Renata Nogueira Prado', '+55 (00) 97777-1234')`, a)
	exec(`INSERT INTO children (church_id, name, birth_date) VALUES ($1, 'Heitor Vasconcelos', '2016-05-05')`, b)

	l := NewLoader(s, LoaderOptions{TTL: time.Hour, Churches: 4})
	k, err := l.ForChurch(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScanner(k)
	doc := `{"a":"beatriz prado","b":"OTAVIO BRANDAO","c":"renata nogueira prado","d":"(00) 97777-1234","e":"09/07/2018","f":"Heitor Vasconcelos","g":"2016-05-05"}`
	got, err := sc.Scan(json.RawMessage(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Detector{"$.a": DetectorKnownName, "$.b": DetectorKnownName, "$.c": DetectorKnownName,
		"$.d": DetectorKnownPhone, "$.e": DetectorKnownBirthDate}
	if len(got) != len(want) {
		t.Fatalf("findings = %v, want %v (church B's values must not be in church A's set)", got, want)
	}
	for _, f := range got {
		if want[f.Path] != f.Detector {
			t.Errorf("unexpected finding %v", f)
		}
	}

	// Cached: a child added now is seen only after Invalidate.
	exec(`INSERT INTO children (church_id, name, birth_date) VALUES ($1, 'Lorena Quintela', '2020-02-20')`, a)
	probe := json.RawMessage(`{"t":"Lorena Quintela"}`)
	k2, err := l.ForChurch(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if k2 != k {
		t.Error("second ForChurch did not come from the cache")
	}
	if f, _ := NewScanner(k2).Scan(probe); len(f) != 0 {
		t.Errorf("cached set already has the new child: %v", f)
	}
	l.Invalidate(a)
	k3, err := l.ForChurch(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := NewScanner(k3).Scan(probe); len(f) != 1 {
		t.Errorf("after Invalidate: findings = %v, want the new child", f)
	}
}

func TestLoaderTTLAndBound(t *testing.T) {
	s := storetest.New(t)
	ctx := context.Background()
	c := uuid.New()
	if _, err := s.Pool().Exec(ctx, `INSERT INTO churches (id, name, slug) VALUES ($1, 'Igreja C', 'igreja-c')`, c); err != nil {
		t.Fatal(err)
	}
	l := NewLoader(s, LoaderOptions{TTL: 100 * time.Millisecond, Churches: 2})
	k1, err := l.ForChurch(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if k1.Patterns() != 0 {
		t.Errorf("empty church: Patterns() = %d", k1.Patterns())
	}
	time.Sleep(250 * time.Millisecond)
	k2, err := l.ForChurch(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if k1 == k2 {
		t.Error("entry older than the TTL was served from the cache")
	}
	for range 3 { // churches without rows still load and take a cache slot
		if _, err := l.ForChurch(ctx, uuid.New()); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.cache.Len(); n > 2 {
		t.Errorf("cache holds %d churches, bound is 2", n)
	}
}
