package freeport_test

import (
	"net"
	"testing"

	"github.com/neemias/neemias-mcp/internal/freeport"
)

func TestAddrsAreDistinctAndBindable(t *testing.T) {
	addrs, err := freeport.Addrs(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("%s handed out twice", a)
		}
		seen[a] = true
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatalf("%s is not free: %v", a, err)
		}
		ln.Close()
	}
	if p, err := freeport.Port(); err != nil || p <= 0 || p > 65535 {
		t.Errorf("Port() = %d, %v", p, err)
	}
}
