package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSlowTmp(t *testing.T) {
	files, _ := filepath.Glob(os.Getenv("CORPUS") + "/*")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		lines := strings.SplitN(string(b), "\n", 3)
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, perr := Parse("x.yaml", []byte(s))
		if el := time.Since(start); el > 50*time.Millisecond {
			n := 0
			if perr != nil {
				n = len(perr.(Diagnostics))
			}
			fmt.Println(f, el, len(s), n)
		}
	}
}
