package oauth

import (
	"net/http"
	"strings"
	"testing"
)

// TestSessionCookieAttributes: HttpOnly and SameSite=Lax always; Secure and the __Host-
// prefix (Path=/, no Domain) under an https issuer.
func TestSessionCookieAttributes(t *testing.T) {
	for _, tc := range []struct {
		secure bool
		want   []string
		not    []string
	}{
		{secure: true, want: []string{"__Host-neemias_session=v", "Path=/", "HttpOnly", "Secure", "SameSite=Lax", "Max-Age=60"}, not: []string{"Domain"}},
		{secure: false, want: []string{"neemias_session=v", "Path=/", "HttpOnly", "SameSite=Lax"}, not: []string{"Secure", "__Host-", "Domain"}},
	} {
		a := &AS{secure: tc.secure}
		got := a.sessionCookie("v", 60).String()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("secure=%v: %q lacks %q", tc.secure, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("secure=%v: %q has %q", tc.secure, got, n)
			}
		}
		if c, err := http.ParseSetCookie(got); err != nil || c.SameSite != http.SameSiteLaxMode || !c.HttpOnly {
			t.Errorf("secure=%v: %q does not parse back: %v", tc.secure, got, err)
		}
	}
}
