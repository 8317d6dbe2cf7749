package cimd

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/neemias/neemias-mcp/internal/netguard"
)

// Resolver looks up a host's addresses. *net.Resolver implements it; tests inject fakes.
type Resolver = netguard.Resolver

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
