package cimd_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/neemias/neemias-mcp/internal/oauth/cimd"
)

func TestExportedAddressRules(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		loopback bool
		ok       bool
	}{
		{"8.8.8.8", false, true},
		{"127.0.0.1", false, false},
		{"127.0.0.1", true, true},
		{"::1", true, true},
		{"10.1.2.3", true, false},
		{"169.254.169.254", true, false},
		{"::ffff:192.168.0.1", true, false},
	} {
		err := cimd.CheckAddress(netip.MustParseAddr(tc.addr), tc.loopback)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, cimd.ErrForbiddenAddress) {
			t.Errorf("CheckAddress(%s, loopback=%v) = %v", tc.addr, tc.loopback, err)
		}
	}
	if _, err := cimd.ResolveChecked(context.Background(), nil, "10.0.0.1", true); !errors.Is(err, cimd.ErrForbiddenAddress) {
		t.Errorf("ResolveChecked(10.0.0.1) = %v", err)
	}
	if err := cimd.DialControl(false)("tcp", "127.0.0.1:80", nil); !errors.Is(err, cimd.ErrForbiddenAddress) {
		t.Errorf("DialControl(127.0.0.1) = %v", err)
	}
}
