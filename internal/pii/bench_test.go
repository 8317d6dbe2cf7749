package pii

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

var (
	benchFirst = []string{"Ana", "Beatriz", "Carlos", "Davi", "Elisa", "Fernanda", "Gabriel", "Helena", "Isadora", "João", "Lucas", "Marina", "Otávio", "Pedro", "Rafaela", "Sofia", "Théo", "Valentina"}
	benchLast  = []string{"Silva", "Santos", "Oliveira", "Souza", "Rodrigues", "Ferreira", "Alves", "Pereira", "Lima", "Gomes", "Conceição", "Araújo", "Ribeiro", "Carvalho"}
)

// benchKnown returns 600 values: 200 children (name + birth date) and 100 guardians (name +
// phone).
func benchKnown(b *testing.B, rng *rand.Rand) *KnownValues {
	name := func() string {
		return benchFirst[rng.IntN(len(benchFirst))] + " " + benchLast[rng.IntN(len(benchLast))] + " " + benchLast[rng.IntN(len(benchLast))]
	}
	var vs []Value
	for range 200 {
		vs = append(vs, Value{KindChildName, name()},
			Value{KindBirthDate, fmt.Sprintf("%d-%02d-%02d", 2012+rng.IntN(12), 1+rng.IntN(12), 1+rng.IntN(28))})
	}
	for range 100 {
		vs = append(vs, Value{KindGuardianName, name()},
			Value{KindGuardianPhone, fmt.Sprintf("+55 (00) 9%04d-%04d", rng.IntN(10000), rng.IntN(10000))})
	}
	k, err := NewKnownValues(vs)
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// benchDoc returns an MCP-like tools/call result of about size bytes: text content with
// numbers, dates and ids, and structured rows.
func benchDoc(rng *rand.Rand, size int) []byte {
	type row struct {
		ID      string  `json:"id"`
		Order   int64   `json:"order"`
		Price   float64 `json:"price"`
		When    string  `json:"when"`
		Comment string  `json:"comment"`
	}
	var rows []row
	var text []byte
	for len(text)+len(rows)*160 < size {
		text = fmt.Appendf(text, "O culto de %02d/%02d/2026 teve %d visitantes; pedido %d, total R$ %d,%02d. ",
			1+rng.IntN(28), 1+rng.IntN(12), rng.IntN(300), rng.Int64N(1e10), rng.IntN(5000), rng.IntN(100))
		rows = append(rows, row{
			ID:    fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Int64N(1<<48)),
			Order: rng.Int64N(1e11), Price: float64(rng.IntN(100000)) / 100,
			When:    fmt.Sprintf("2026-%02d-%02dT10:%02d:00Z", 1+rng.IntN(12), 1+rng.IntN(28), rng.IntN(60)),
			Comment: benchFirst[rng.IntN(len(benchFirst))] + " trouxe a oferta da turma",
		})
	}
	doc, _ := json.Marshal(map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": string(text)}},
		"structuredContent": map[string]any{"rows": rows},
	})
	return doc
}

// BenchmarkScan: a ~70 KB document against a 600-value automaton. Its text is ASCII and
// Portuguese with precomposed accents, which normalize leaves as it is (the common case).
func BenchmarkScan(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	k := benchKnown(b, rng)
	doc := benchDoc(rng, 70_000)
	s := NewScanner(k)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.ReportMetric(float64(k.Patterns()), "patterns")
	for b.Loop() {
		if _, err := s.Scan(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan70KBUnicode: BenchmarkScan on a ~70 KB document whose every text needs
// normalizing (full-width digits, zero-width spaces, decomposed accents, en dashes), the
// scanner's slowest path.
func BenchmarkScan70KBUnicode(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	k := benchKnown(b, rng)
	doc := benchDocUnicode(rng, 70_000)
	s := NewScanner(k)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Scan(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// benchDocUnicode is benchDoc with text written the ways normalize undoes.
func benchDocUnicode(rng *rand.Rand, size int) []byte {
	fw := func(s string) string { // full-width digits
		r := []rune(s)
		for i, c := range r {
			if c >= '0' && c <= '9' {
				r[i] = c - '0' + '０'
			}
		}
		return string(r)
	}
	var parts []any
	n := 0
	for n < size {
		t := fmt.Sprintf("O culto de %s teve %d visitantes;\u200b pedido %s – total R$ %d,%02d. Conceic\u0327a\u0303o trouxe a oferta. ",
			fw(fmt.Sprintf("%02d/%02d/2026", 1+rng.IntN(28), 1+rng.IntN(12))), rng.IntN(300), fw(fmt.Sprint(rng.Int64N(1e10))), rng.IntN(5000), rng.IntN(100))
		parts = append(parts, map[string]any{"type": "text", "text": t})
		n += len(t) + 30
	}
	doc, _ := json.Marshal(map[string]any{"content": parts})
	return doc
}

// BenchmarkNewKnownValues: building one church's automaton (what a cache miss costs).
func BenchmarkNewKnownValues(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		benchKnown(b, rng)
	}
}
