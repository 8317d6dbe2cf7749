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
