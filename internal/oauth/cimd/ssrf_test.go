package cimd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestParseClientIDRefusesWithoutNetwork covers checklist C04/C05 and the URL half of C06:
// client_ids that are not acceptable metadata URLs are refused before any lookup.
func TestParseClientIDRefusesWithoutNetwork(t *testing.T) {
	bad := []string{
		"",
		"http://client.example.com/meta.json",       // C04: http
		"HTTPS://client.example.com/meta.json",      // scheme spelled differently than the draft's
		"https://client.example.com",                // C04: no path
		"https://client.example.com/",               // path "/" only
		"https://client.example.com?return=/x.json", // C04: query but no path
		"https://user@client.example.com/meta.json", // C05: userinfo
		"https://user:pw@client.example.com/m.json", // C05: userinfo with password
		"https://client.example.com/meta.json#frag", // C05: fragment
		"https://client.example.com/meta.json#",     // C05: empty fragment
		"https://client.example.com/a/../meta.json", // C05: dot-dot segment
		"https://client.example.com/./meta.json",    // C05: dot segment
		"https://client.example.com/a/%2e%2e/m.json",
		"https://client.example.com/a/.%2E/m.json",
		"https://client.example.com/..",
		"https://client.example.com\\@evil.example/m.json",
		"https://client.example.com/meta json",
		"https://client.example.com/meta\tjson",
		"https://client.example.com/meta\x00.json",
		"https://clíent.example.com/meta.json", // non-ASCII host (IDN must be punycode)
		"https://2130706433/meta.json",         // decimal IPv4
		"https://0x7f000001/meta.json",         // hex IPv4
		"https://0177.0.0.1/meta.json",         // octal IPv4
		"https://0x7f.1/meta.json",             // mixed short form
		"https://127.1/meta.json",              // short form
		"https://localhost/meta.json",
		"https://api.localhost/meta.json",
		"https://metadata.google.internal/computeMetadata/v1/",
		"https://printer.local/meta.json",
		"https://intranet/meta.json", // single label
		"https://client.example.com./meta.json",
		"https://%31%32%37.0.0.1/meta.json", // percent-encoded host
		"https://[::ffff:127.0.0.1]/meta.json",
		"https://[::ffff:7f00:1]/meta.json",
		"https://[fe80::1%25eth0]/meta.json",
		"https://client.example.com:/meta.json",
		"https://client.example.com:0/meta.json",
		"https://client.example.com:65536/meta.json",
		"https://-bad-.example.com/meta.json",
		"https://client.example.com" + "/" + string(make([]byte, 2100)),
	}
	for _, id := range bad {
		_, err := ParseClientID(id)
		if !errors.Is(err, ErrNotMetadataURL) {
			t.Errorf("ParseClientID(%q) = %v, want ErrNotMetadataURL", id, err)
		}
	}
	good := []string{
		"https://client.example.com/meta.json",
		"https://client.example.com:8443/oauth/client-metadata.json",
		"https://client.example.com/meta.json?v=2",
		"https://93.184.216.34/meta.json", // a public literal passes syntax; the policy judges it
		"https://[2606:4700::1111]/meta.json",
		"https://xn--clnt-7na.example.com/m.json",
	}
	for _, id := range good {
		if _, err := ParseClientID(id); err != nil {
			t.Errorf("ParseClientID(%q) = %v, want nil", id, err)
		}
	}
}

// TestFetchSSRF is checklist C06: every internal or encoded destination is refused with no
// connection made. Name-based attempts aim at a loopback canary's port, which must stay
// untouched; the dial guard fails the test if any non-loopback connect is even attempted.
func TestFetchSSRF(t *testing.T) {
	c := newCanary(t)
	p := c.port()
	res := newResolver()
	res.set("private.example.com", []string{"10.0.0.5"})
	res.set("loopback.example.com", []string{"127.0.0.1"})
	res.set("127.0.0.1.nip.example.com", []string{"127.0.0.1"})
	res.set("metadata.example.com", []string{"169.254.169.254"})
	res.set("mapped.example.com", []string{"::ffff:127.0.0.1"})
	res.set("v6loop.example.com", []string{"::1"})
	res.set("ula.example.com", []string{"fd00::1"})
	res.set("cgnat.example.com", []string{"100.64.0.1"})
	res.set("zero.example.com", []string{"0.0.0.0"})
	res.set("mixed.example.com", []string{"93.184.216.34", "10.1.2.3"})
	res.set("nat64.example.com", []string{"64:ff9b::7f00:1"})
	res.set("sixtofour.example.com", []string{"2002:7f00:1::1"})
	res.set("teredo.example.com", []string{"2001:0:4136:e378:8000:63bf:3fff:fdd2"})
	f, g := newTestFetcher(t, Options{Resolver: res})

	cases := []struct {
		id   string
		want error
	}{
		{"http://127.0.0.1/meta.json", ErrNotMetadataURL},
		{fmt.Sprintf("http://loopback.example.com:%d/meta.json", p), ErrNotMetadataURL},
		{fmt.Sprintf("https://127.0.0.1:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://127.9.9.9:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://[::1]:%d/meta.json", p), ErrForbiddenAddress},
		{"https://10.0.0.1/meta.json", ErrForbiddenAddress},
		{"https://172.16.0.1/meta.json", ErrForbiddenAddress},
		{"https://192.168.1.1/meta.json", ErrForbiddenAddress},
		{"https://169.254.169.254/latest/meta-data/", ErrForbiddenAddress},
		{"https://100.64.0.1/meta.json", ErrForbiddenAddress},
		{"https://0.0.0.0/meta.json", ErrForbiddenAddress},
		{"https://224.0.0.1/meta.json", ErrForbiddenAddress},
		{"https://255.255.255.255/meta.json", ErrForbiddenAddress},
		{"https://198.18.0.1/meta.json", ErrForbiddenAddress},
		{"https://[::]/meta.json", ErrForbiddenAddress},
		{"https://[fc00::1]/meta.json", ErrForbiddenAddress},
		{"https://[fe80::1]/meta.json", ErrForbiddenAddress},
		{"https://[ff02::1]/meta.json", ErrForbiddenAddress},
		{"https://[::127.0.0.1]/meta.json", ErrForbiddenAddress}, // IPv4-compatible
		{"https://[64:ff9b::7f00:1]/meta.json", ErrForbiddenAddress},
		{"https://[2002:7f00:1::1]/meta.json", ErrForbiddenAddress},
		{"https://[2001:db8::1]/meta.json", ErrForbiddenAddress},
		{"https://0x7f000001/meta.json", ErrNotMetadataURL},
		{"https://2130706433/meta.json", ErrNotMetadataURL},
		{"https://0177.0.0.1/meta.json", ErrNotMetadataURL},
		{"https://[::ffff:127.0.0.1]/meta.json", ErrNotMetadataURL},
		{fmt.Sprintf("https://private.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://loopback.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://127.0.0.1.nip.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://metadata.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://mapped.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://v6loop.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://ula.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://cgnat.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://zero.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://mixed.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://nat64.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://sixtofour.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://teredo.example.com:%d/meta.json", p), ErrForbiddenAddress},
		{fmt.Sprintf("https://unknown.example.com:%d/meta.json", p), ErrFetch}, // NXDOMAIN
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			_, err := f.Fetch(context.Background(), tc.id)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Fetch = %v, want %v", err, tc.want)
			}
			// The reason the error page names: not https, a bad URL, a refused address, or
			// no answer.
			want := map[error]Reason{ErrNotMetadataURL: ReasonBadURL, ErrForbiddenAddress: ReasonAddress, ErrFetch: ReasonUnreachable}[tc.want]
			if strings.HasPrefix(tc.id, "http://") {
				want = ReasonNotHTTPS
			}
			if e, ok := ReasonOf(err); !ok || e.Reason != want {
				t.Errorf("Fetch = %v: reason %+v, want %s", err, e, want)
			}
		})
	}
	if d := g.dials(); len(d) != 0 {
		t.Errorf("connects attempted: %v", d)
	}
	if n := c.conns.Load(); n != 0 {
		t.Errorf("canary got %d connections", n)
	}
}

// TestFetchDNSRebinding: the first lookup (the pre-check) answers a public address, the
// connect-time lookup answers loopback or private; the fetcher refuses before connecting, and
// never connects to the public address it was first shown either.
func TestFetchDNSRebinding(t *testing.T) {
	for _, second := range []string{"127.0.0.1", "10.0.0.7", "::1", "169.254.169.254"} {
		t.Run(second, func(t *testing.T) {
			c := newCanary(t)
			res := newResolver()
			res.set("rebind.example.com", []string{"93.184.216.34"}, []string{second})
			f, g := newTestFetcher(t, Options{Resolver: res})
			_, err := f.Fetch(context.Background(), fmt.Sprintf("https://rebind.example.com:%d/meta.json", c.port()))
			if !errors.Is(err, ErrForbiddenAddress) {
				t.Fatalf("Fetch = %v, want ErrForbiddenAddress", err)
			}
			if n := res.lookups("rebind.example.com"); n != 2 {
				t.Errorf("lookups = %d, want 2 (pre-check and connect time)", n)
			}
			if d := g.dials(); len(d) != 0 {
				t.Errorf("connects attempted: %v", d)
			}
			if n := c.conns.Load(); n != 0 {
				t.Errorf("canary got %d connections", n)
			}
		})
	}
}
