package cimd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// Resolver looks up a host's addresses. *net.Resolver implements it; tests inject fakes.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// blockedV4 are the IPv4 special-purpose ranges (RFC 6890 and its updates) that are not
// globally reachable unicast, plus the ones that are but must never be an OAuth client's host.
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

// addrPolicy decides which addresses the fetcher may connect to.
type addrPolicy struct {
	allowLoopback bool // tests only
}

// check returns nil when a is a public unicast address (or loopback, when allowed for tests).
// The reason never contains the address itself.
func (p addrPolicy) check(a netip.Addr) error {
	if !a.IsValid() {
		return because(ReasonAddress, fmt.Errorf("%w: invalid address", ErrForbiddenAddress))
	}
	if a.Zone() != "" {
		return because(ReasonAddress, fmt.Errorf("%w: scoped IPv6 address", ErrForbiddenAddress))
	}
	a = a.Unmap() // resolvers hand IPv4 answers back as ::ffff:a.b.c.d; judge the IPv4 address
	if p.allowLoopback && a.IsLoopback() {
		return nil
	}
	switch {
	case a.IsLoopback():
		return because(ReasonAddress, fmt.Errorf("%w: loopback address", ErrForbiddenAddress))
	case a.IsUnspecified():
		return because(ReasonAddress, fmt.Errorf("%w: unspecified address", ErrForbiddenAddress))
	case a.IsPrivate():
		return because(ReasonAddress, fmt.Errorf("%w: private address", ErrForbiddenAddress))
	case a.IsLinkLocalUnicast():
		return because(ReasonAddress, fmt.Errorf("%w: link-local address", ErrForbiddenAddress))
	case a.IsMulticast():
		return because(ReasonAddress, fmt.Errorf("%w: multicast address", ErrForbiddenAddress))
	}
	if a.Is4() {
		for _, b := range blockedV4 {
			if b.Contains(a) {
				return because(ReasonAddress, fmt.Errorf("%w: special-purpose IPv4 address", ErrForbiddenAddress))
			}
		}
		return nil
	}
	if !allowedV6.Contains(a) {
		return because(ReasonAddress, fmt.Errorf("%w: non-global IPv6 address", ErrForbiddenAddress))
	}
	for _, b := range blockedV6 {
		if b.Contains(a) {
			return because(ReasonAddress, fmt.Errorf("%w: special-purpose IPv6 address", ErrForbiddenAddress))
		}
	}
	return nil
}

// control is the net.Dialer Control hook: the last check, on the address the socket is about
// to connect to.
func (p addrPolicy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return because(ReasonAddress, fmt.Errorf("%w: unparsable dial address", ErrForbiddenAddress))
	}
	return p.check(ap.Addr())
}

// resolve returns the addresses of host, every one of which passed the policy. An IP literal
// is checked as is; a name is looked up and refused if any answer is not allowed (a name that
// mixes public and internal answers is an attack, not a misconfiguration worth working around).
func (p addrPolicy) resolve(ctx context.Context, r Resolver, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if err := p.check(a); err != nil {
			return nil, err
		}
		return []netip.Addr{a}, nil
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return nil, because(ReasonUnreachable, fmt.Errorf("%w: host not found", ErrFetch))
		}
		if ctx.Err() != nil {
			return nil, because(ReasonUnreachable, fmt.Errorf("%w: resolving host: %w", ErrFetch, ctx.Err()))
		}
		return nil, because(ReasonUnreachable, fmt.Errorf("%w: resolving host failed", ErrFetch))
	}
	if len(addrs) == 0 {
		return nil, because(ReasonUnreachable, fmt.Errorf("%w: host has no addresses", ErrFetch))
	}
	for _, a := range addrs {
		if err := p.check(a); err != nil {
			return nil, fmt.Errorf("host resolves to a refused address: %w", err)
		}
	}
	return addrs, nil
}

// checkHostSyntax accepts an IP literal (judged later by the policy) or a DNS name of at least
// two labels whose last label is alphabetic-led, which rules out every numeric, octal and hex
// IPv4 spelling resolvers would otherwise interpret (2130706433, 0x7f000001, 0177.0.0.1,
// 0x7f.1), and names that are local by definition.
func checkHostSyntax(host string) error {
	if host == "" {
		return because(ReasonBadURL, fmt.Errorf("%w: no host", ErrNotMetadataURL))
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return because(ReasonBadURL, fmt.Errorf("%w: scoped IPv6 literal", ErrNotMetadataURL))
		}
		if a.Is4In6() {
			return because(ReasonBadURL, fmt.Errorf("%w: IPv4-mapped IPv6 literal", ErrNotMetadataURL))
		}
		return nil
	}
	if len(host) > 253 {
		return because(ReasonBadURL, fmt.Errorf("%w: host name too long", ErrNotMetadataURL))
	}
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return because(ReasonBadURL, fmt.Errorf("%w: host is not a fully qualified domain name", ErrNotMetadataURL))
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return because(ReasonBadURL, fmt.Errorf("%w: malformed host name", ErrNotMetadataURL))
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return because(ReasonBadURL, fmt.Errorf("%w: malformed host name", ErrNotMetadataURL))
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return because(ReasonBadURL, fmt.Errorf("%w: malformed host name", ErrNotMetadataURL))
			}
		}
	}
	tld := strings.ToLower(labels[len(labels)-1])
	if c := tld[0]; c < 'a' || c > 'z' {
		return because(ReasonBadURL, fmt.Errorf("%w: host looks like a numeric address", ErrNotMetadataURL))
	}
	switch tld {
	case "localhost", "local", "internal", "localdomain", "home", "lan", "arpa", "invalid", "test", "onion":
		return because(ReasonBadURL, fmt.Errorf("%w: host is in a local or special-use domain", ErrNotMetadataURL))
	}
	return nil
}
