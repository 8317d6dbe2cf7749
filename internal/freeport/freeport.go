// Package freeport finds free loopback TCP addresses for the processes this one starts: the
// private PostgreSQL of make run (internal/devdb), the bench's server, and the servers and
// identity providers tests start. An address is free when asked; another process could take it
// before it is bound, a risk on loopback worth a fixed address known in advance.
package freeport

import (
	"fmt"
	"net"
	"strconv"
)

// Addrs returns n distinct loopback addresses (host:port), all held open while they are
// chosen so that none is handed out twice.
func Addrs(n int) ([]string, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	out := make([]string, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("freeport: %w", err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	return out, nil
}

// Addr returns one free loopback address.
func Addr() (string, error) {
	a, err := Addrs(1)
	if err != nil {
		return "", err
	}
	return a[0], nil
}

// Port returns one free loopback port.
func Port() (int, error) {
	a, err := Addr()
	if err != nil {
		return 0, err
	}
	_, p, _ := net.SplitHostPort(a)
	return strconv.Atoi(p)
}
