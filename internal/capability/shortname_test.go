package capability

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShortNames(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"first name and last initial", []string{"Ana Clara Souza", "Bruno Lima"}, []string{"Ana S.", "Bruno L."}},
		{"a one-word name stays", []string{"Davi"}, []string{"Davi"}},
		{"same first name, other initial", []string{"Ana Souza", "Ana Lima"}, []string{"Ana S.", "Ana L."}},
		{"lengthened until distinct", []string{"Ana Souza", "Ana Silva", "Ana Lima"}, []string{"Ana So.", "Ana Si.", "Ana L."}},
		{"accents and case ignored", []string{"Ana Sá", "ANA Sa"}, []string{"Ana Sá", "ANA Sa 2"}},
		{"whole last name, then middle initials", []string{"Ana Clara Lima", "Ana Maria Lima"}, []string{"Ana C. Lima", "Ana M. Lima"}},
		{"particles skipped", []string{"Ana da Costa Lima", "Ana Beatriz Lima"}, []string{"Ana C. Lima", "Ana B. Lima"}},
		{"names alike get numbers in list order", []string{"Ana Lima", "Ana Lima", "Ana Lima"}, []string{"Ana Lima", "Ana Lima 2", "Ana Lima 3"}},
		{"a prefix of another last name", []string{"Ana Sous", "Ana Sousa"}, []string{"Ana Sous", "Ana Sousa"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := append([]string(nil), tt.in...)
			ShortNames(len(got), func(i int) *string { return &got[i] })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ShortNames(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestShortNamesSkipsNil(t *testing.T) {
	a := "Ana Souza"
	ptrs := []*string{nil, &a}
	ShortNames(len(ptrs), func(i int) *string { return ptrs[i] })
	if a != "Ana S." {
		t.Errorf("got %q, want Ana S.", a)
	}
}

func TestFoldName(t *testing.T) {
	for in, want := range map[string]string{"Ána  S.": "ana s", "ana s": "ana s", "JOÃO P. Lima": "joao p lima"} {
		if got := FoldName(in); got != want {
			t.Errorf("FoldName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFoldNameConcurrently: FoldName runs in every concurrent check-in (a shared
// transform.Chain keeps state and once crashed a replica under load: slice bounds out of
// range in golang.org/x/text/transform); go test -race sees any sharing.
func TestFoldNameConcurrently(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 2000 {
				if got := FoldName("Ána  Conceição"); got != "ana conceicao" {
					t.Errorf("FoldName = %q", got)
					return
				}
			}
		})
	}
	wg.Wait()
}
