package mcp

import (
	"encoding/json"
	"testing"
)

var jsonStringCorpus = []string{
	"", "plain", `quote " backslash \ slash /`, "nl \n cr \r tab \t bs \b ff \f nul \x00 unit \x1f del \x7f",
	"html <b> & </b>", "Berçário, São João, 日本, 😀", "line sep \u2028 para sep \u2029",
	"bad \xff utf8 \xc3 end", "\xed\xa0\x80 surrogate", `{"json":"inside","n":[1,2]}`,
}

// TestAppendJSONString: the fast path writes strings exactly as encoding/json (the SDK's
// encoding of a result) does.
func TestAppendJSONString(t *testing.T) {
	for _, s := range jsonStringCorpus {
		checkJSONString(t, s)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkJSONString(t, s) })
}

func checkJSONString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendJSONString([]byte("prefix"), s); string(got) != "prefix"+string(want) {
		t.Fatalf("%q:\ngot  %s\nwant %s", s, got[len("prefix"):], want)
	}
}

// BenchmarkAppendJSONString: a busy Sunday's read as a resource text, escaped by the fast
// path and by encoding/json.
func BenchmarkAppendJSONString(b *testing.B) {
	rows := make([]map[string]string, 212)
	for i := range rows {
		rows[i] = map[string]string{"checkin_id": "8c6a01d4-0000-4000-8000-000000000001", "child_handle": "K7Q2MX", "child_label": "Ana S.",
			"class_id": "8c6a01d4-0000-4000-8000-000000000000", "class_name": "Berçário", "checked_in_at": "2026-10-25T12:00:14Z"}
	}
	doc, _ := json.Marshal(map[string]any{"date": "2026-10-25", "checkins": rows})
	text := string(doc)
	b.Run("fast-path", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		buf := make([]byte, 0, 2*len(text))
		for b.Loop() {
			buf = appendJSONString(buf[:0], text)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, err := json.Marshal(text); err != nil {
				b.Fatal(err)
			}
		}
	})
}
