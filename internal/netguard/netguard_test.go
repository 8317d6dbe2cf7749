package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/neemias/neemias-mcp/internal/netguard"
)

// TestControlChecksSocketAddress: the dialer's Control hook, the last line of defence, judges
// the address the socket is about to connect to. Called directly; nothing is dialled.
func TestControlChecksSocketAddress(t *testing.T) {
	p := netguard.Policy{}
	for _, a := range []string{"127.0.0.1:443", "[::1]:443", "10.0.0.1:443", "169.254.169.254:80", "[::ffff:127.0.0.1]:443", "[fe80::1]:443", "0.0.0.0:443"} {
		if err := p.Control("tcp", a, nil); !errors.Is(err, netguard.ErrForbiddenAddress) {
			t.Errorf("control(%s) = %v, want netguard.ErrForbiddenAddress", a, err)
		}
	}
	for _, a := range []string{"93.184.216.34:443", "[2606:4700::1111]:443"} {
		if err := p.Control("tcp", a, nil); err != nil {
			t.Errorf("control(%s) = %v, want nil", a, err)
		}
	}
	test := netguard.Policy{AllowLoopback: true}
	if err := test.Control("tcp", "127.0.0.1:443", nil); err != nil {
		t.Errorf("test policy refused loopback: %v", err)
	}
	if err := test.Control("tcp", "10.0.0.1:443", nil); !errors.Is(err, netguard.ErrForbiddenAddress) {
		t.Errorf("test policy allowed a private address: %v", err)
	}
}

func TestAddrPolicy(t *testing.T) {
	p := netguard.Policy{}
	refused := []string{
		"0.0.0.0", "0.1.2.3", "10.255.255.255", "100.64.0.0", "100.127.255.255", "127.0.0.1",
		"169.254.0.1", "172.16.0.1", "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.88.99.1",
		"192.168.0.1", "198.18.0.1", "198.51.100.1", "203.0.113.1", "224.0.0.1", "239.255.255.255",
		"240.0.0.1", "255.255.255.255",
		"::", "::1", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "::127.0.0.1", "64:ff9b::a00:1",
		"64:ff9b:1::1", "100::1", "2001::1", "2001:db8::1", "2002::1", "fc00::1", "fd12::1",
		"fe80::1", "fec0::1", "ff02::1", "3fff::1",
	}
	for _, s := range refused {
		if err := p.Check(netip.MustParseAddr(s)); !errors.Is(err, netguard.ErrForbiddenAddress) {
			t.Errorf("check(%s) = %v, want refused", s, err)
		}
	}
	allowed := []string{"1.1.1.1", "8.8.8.8", "93.184.216.34", "100.63.255.255", "100.128.0.0", "172.32.0.1", "::ffff:8.8.8.8", "2606:4700::1111", "2a00:1450::1"}
	for _, s := range allowed {
		if err := p.Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("check(%s) = %v, want allowed", s, err)
		}
	}
}

// fakeResolver answers from a table; a missing name is not found.
type fakeResolver map[string][]string

func (r fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ss, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

// TestResolve: a name is refused when any of its answers is, an unknown name is unresolved,
// and no error names an address.
func TestResolve(t *testing.T) {
	r := fakeResolver{"public.example": {"93.184.216.34"}, "mixed.example": {"93.184.216.34", "10.0.0.7"},
		"rebind.example": {"169.254.169.254"}, "empty.example": {}}
	p := netguard.Policy{}
	if got, err := p.Resolve(context.Background(), r, "public.example"); err != nil || len(got) != 1 {
		t.Errorf("public: %v %v", got, err)
	}
	for host, want := range map[string]error{"mixed.example": netguard.ErrForbiddenAddress, "rebind.example": netguard.ErrForbiddenAddress,
		"nowhere.example": netguard.ErrUnresolved, "empty.example": netguard.ErrUnresolved, "10.0.0.1": netguard.ErrForbiddenAddress} {
		_, err := p.Resolve(context.Background(), r, host)
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", host, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "10.0.0") || strings.Contains(err.Error(), "169.254")) {
			t.Errorf("%s: the error names the address: %v", host, err)
		}
	}
}

// TestDialer: the dialer reaches a loopback server only when loopback is allowed, and only the
// one address it is limited to.
func TestDialer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx := context.Background()
	if _, err := netguard.NewDialer(netguard.Policy{}, nil, time.Second).DialContext(ctx, "tcp", ln.Addr().String()); !errors.Is(err, netguard.ErrForbiddenAddress) {
		t.Errorf("loopback without the exception: %v", err)
	}
	d := netguard.NewDialer(netguard.Policy{AllowLoopback: true}, nil, time.Second)
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("loopback allowed: %v", err)
	}
	c.Close()
	d.Only = ln.Addr().String()
	if _, err := d.DialContext(ctx, "tcp", "127.0.0.1:1"); !errors.Is(err, netguard.ErrForbiddenAddress) {
		t.Errorf("another address than Only: %v", err)
	}
	d.Only = ""
	if _, err := d.DialContext(ctx, "tcp", "no-port"); !errors.Is(err, netguard.ErrUnresolved) {
		t.Errorf("a malformed address: %v", err)
	}
}
