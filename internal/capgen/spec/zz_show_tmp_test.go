package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestShowTmp(t *testing.T) {
	files, _ := filepath.Glob(os.Getenv("SHOW"))
	for _, f := range files {
		_, err := Load(f)
		fmt.Printf("== %s\n%v\n", f, err)
	}
}
