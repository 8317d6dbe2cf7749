package cimd

import (
	"context"
	"net"
	"net/netip"
	"syscall"
)

// The fetcher's address rules, exported for the other outbound client that must not be turned
// against the internal network: the governed upstream MCP client (internal/upstream). The
// rules are the same; only the loopback exception differs, and it is the caller's to decide.

// CheckAddress returns nil when a is public unicast (or loopback, when allowLoopback), else an
// error wrapping ErrForbiddenAddress that never contains the address.
func CheckAddress(a netip.Addr, allowLoopback bool) error {
	return addrPolicy{allowLoopback: allowLoopback}.check(a)
}

// ResolveChecked resolves host with r (nil: net.DefaultResolver) and returns its addresses
// when every one passes [CheckAddress]; an IP literal is checked as is.
func ResolveChecked(ctx context.Context, r Resolver, host string, allowLoopback bool) ([]netip.Addr, error) {
	if r == nil {
		r = defaultResolver()
	}
	return addrPolicy{allowLoopback: allowLoopback}.resolve(ctx, r, host)
}

// DialControl returns a net.Dialer Control hook that refuses, before any packet is sent, a
// socket about to connect to an address [CheckAddress] refuses.
func DialControl(allowLoopback bool) func(network, address string, c syscall.RawConn) error {
	return addrPolicy{allowLoopback: allowLoopback}.control
}

func defaultResolver() Resolver { return net.DefaultResolver }
