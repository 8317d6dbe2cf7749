// Package netguard keeps the server's outbound connections off the internal network (SSRF):
// the one address policy and the one dialer of every client that connects to an address
// someone else chose, the CIMD fetcher (internal/oauth/cimd: a client_id URL) and the governed
// upstream MCP client (internal/upstream: an operator's URL, which may be redirected by DNS).
//
// A host is resolved, every answer is judged (a name that mixes public and internal answers is
// refused: an attack, not a misconfiguration), only a judged address is dialled, and the
// socket's address is judged once more in the dialer's Control hook, before any packet is
// sent, so a DNS answer that changes between the check and the connect changes nothing.
// Errors never contain the address.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

var (
	// ErrForbiddenAddress: the destination is not a public unicast address (or not the one
	// the dialer is limited to).
	ErrForbiddenAddress = errors.New("destination address not allowed")
	// ErrUnresolved: the host has no address to connect to (not found, no answer, a lookup
	// that failed or was cancelled, or a malformed host:port).
	ErrUnresolved = errors.New("host could not be resolved")
)

// Resolver looks up a host's addresses. *net.Resolver implements it; tests inject fakes.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// blockedV4 are the IPv4 special-purpose ranges (RFC 6890 and its updates) that are not
// globally reachable unicast, plus the ones that are but must never be a destination.
var blockedV4 = mustPrefixes(
	"0.0.0.0/8",       // "this network", incl. 0.0.0.0
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // CGNAT shared address space
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, cloud metadata (169.254.169.254)
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // TEST-NET-1
	"192.31.196.0/24", // AS112
	"192.52.193.0/24", // AMT
	"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
	"192.168.0.0/16",  // private
	"192.175.48.0/24", // AS112 direct delegation
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // TEST-NET-2
	"203.0.113.0/24",  // TEST-NET-3
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, incl. 255.255.255.255
)

// allowedV6 is global unicast; everything outside it (::, ::1, ::/96 IPv4-compatible,
// ::ffff:0:0/96 mapped, 64:ff9b::/96 NAT64, 100::/64 discard, fc00::/7 unique local,
// fe80::/10 link-local, fec0::/10, ff00::/8 multicast) is refused.
var allowedV6 = netip.MustParsePrefix("2000::/3")

// blockedV6 are the special-purpose ranges inside 2000::/3.
var blockedV6 = mustPrefixes(
	"2001::/23",     // IETF protocol assignments, incl. Teredo 2001::/32 (embeds IPv4)
	"2001:db8::/32", // documentation
	"2002::/16",     // 6to4 (embeds IPv4)
	"3fff::/20",     // documentation
	"5f00::/16",     // SRv6 SIDs
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Policy decides which addresses may be connected to: public unicast only, and loopback when
// AllowLoopback (an operator's upstream on this machine, or a test's server).
type Policy struct {
	AllowLoopback bool
}

func forbidden(why string) error { return fmt.Errorf("%w: %s", ErrForbiddenAddress, why) }

// Check returns nil when a is a public unicast address (or loopback, when allowed), else an
// error wrapping ErrForbiddenAddress that names the kind of address, never the address.
func (p Policy) Check(a netip.Addr) error {
	if !a.IsValid() {
		return forbidden("invalid address")
	}
	if a.Zone() != "" {
		return forbidden("scoped IPv6 address")
	}
	a = a.Unmap() // resolvers hand IPv4 answers back as ::ffff:a.b.c.d; judge the IPv4 address
	if p.AllowLoopback && a.IsLoopback() {
		return nil
	}
	switch {
	case a.IsLoopback():
		return forbidden("loopback address")
	case a.IsUnspecified():
		return forbidden("unspecified address")
	case a.IsPrivate():
		return forbidden("private address")
	case a.IsLinkLocalUnicast():
		return forbidden("link-local address")
	case a.IsMulticast():
		return forbidden("multicast address")
	}
	if a.Is4() {
		for _, b := range blockedV4 {
			if b.Contains(a) {
				return forbidden("special-purpose IPv4 address")
			}
		}
		return nil
	}
	if !allowedV6.Contains(a) {
		return forbidden("non-global IPv6 address")
	}
	for _, b := range blockedV6 {
		if b.Contains(a) {
			return forbidden("special-purpose IPv6 address")
		}
	}
	return nil
}

// Control is a net.Dialer Control hook: the last check, on the address the socket is about to
// connect to.
func (p Policy) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return forbidden("unparsable dial address")
	}
	return p.Check(ap.Addr())
}

// Resolve returns the addresses of host, every one of which passed the policy. An IP literal
// is checked as is; a name is looked up with r (nil: net.DefaultResolver) and refused if any
// answer is not allowed.
func (p Policy) Resolve(ctx context.Context, r Resolver, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if err := p.Check(a); err != nil {
			return nil, err
		}
		return []netip.Addr{a}, nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		var dnsErr *net.DNSError
		switch {
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			return nil, fmt.Errorf("%w: host not found", ErrUnresolved)
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%w: resolving host: %w", ErrUnresolved, ctx.Err())
		}
		return nil, fmt.Errorf("%w: resolving host failed", ErrUnresolved)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: host has no addresses", ErrUnresolved)
	}
	for _, a := range addrs {
		if err := p.Check(a); err != nil {
			return nil, fmt.Errorf("host resolves to a refused address: %w", err)
		}
	}
	return addrs, nil
}

// Dialer connects only to addresses its Policy accepts: it resolves the host again at dial
// time and dials each checked answer in turn with Net (NewDialer sets Net's Control hook to the
// policy's; a test may wrap it to watch every socket), giving the first error when none answers.
type Dialer struct {
	Policy   Policy
	Resolver Resolver // nil: net.DefaultResolver
	// Only, when set, is the one host:port this dialer may reach (an upstream's own address):
	// a request the transport would send elsewhere is refused.
	Only string
	// Net dials the checked addresses; its Timeout bounds each connect.
	Net *net.Dialer
}

// NewDialer returns a Dialer of p with a connect timeout.
func NewDialer(p Policy, r Resolver, connectTimeout time.Duration) *Dialer {
	return &Dialer{Policy: p, Resolver: r, Net: &net.Dialer{Timeout: connectTimeout, Control: p.Control}}
}

// DialContext is an http.Transport's DialContext.
func (d *Dialer) DialContext(ctx context.Context, _, address string) (net.Conn, error) {
	if d.Only != "" && address != d.Only {
		return nil, forbidden("dial to an address other than the configured one")
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("%w: bad address", ErrUnresolved)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: bad port", ErrUnresolved)
	}
	addrs, err := d.Policy.Resolve(ctx, d.Resolver, host)
	if err != nil {
		return nil, err
	}
	var first error
	for _, a := range addrs {
		conn, err := d.Net.DialContext(ctx, "tcp", netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}
