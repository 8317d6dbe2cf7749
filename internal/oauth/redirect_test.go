package oauth

import (
	"testing"
)

func TestCheckRedirectURI(t *testing.T) {
	t.Parallel()
	good := map[string]redirectKind{
		"https://app.example/cb":                         redirectHTTPS,
		"https://app.example:8443/cb?x=1":                redirectHTTPS,
		"http://127.0.0.1/cb":                            redirectLoopback,
		"http://127.0.0.1:3000/cb":                       redirectLoopback,
		"http://[::1]:3000/cb":                           redirectLoopback,
		"http://localhost:3000/oauth/callback":           redirectLoopback,
		"com.example.app:/oauth2redirect":                redirectPrivate,
		"cursor://anysphere.cursor-mcp/oauth/callback":   redirectPrivate,
		"vscode://vscode.github-authentication/did-auth": redirectPrivate,
	}
	for u, want := range good {
		if got, err := checkRedirectURI(u); err != nil || got != want {
			t.Errorf("%q: %v %v, want kind %v", u, got, err, want)
		}
	}
	for _, u := range []string{
		"", "/cb", "cb", "javascript:alert(1)", "JAVASCRIPT:alert(1)", "data:text/html,x", "file:///x", "vbscript:x", "blob:x",
		"mailto:x@y", "about:blank", "ws://127.0.0.1/x", " https://a.example/cb", "https://a.example/cb ", "https://a.example/\tcb",
		"https://a.example/é", "https://a.example/cb#f", "https://u@a.example/cb", "https://a.example\\@b.example/",
		"HTTPS://a.example/cb", "Http://127.0.0.1/cb", "http://a.example/cb", "http://127.0.0.1.nip.io/cb", "http://127.1/cb",
		"http://0x7f.0.0.1/cb", "http://[::ffff:127.0.0.1]/cb", "http://127.0.0.1:99999999/cb", "http://127.0.0.1:65536/cb", "http://127.0.0.1:+80/cb", "http://127.0.0.1:x/cb",
		"https:///cb", "https:cb", "com.example.app:", "com.example.app:/", "1app:/cb",
	} {
		if _, err := checkRedirectURI(u); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}

func TestMatchRedirectURI(t *testing.T) {
	t.Parallel()
	reg := []string{"http://127.0.0.1:3000/cb", "http://localhost/cb?x=1", "https://app.example/cb", "com.example.app:/r"}
	for req, want := range map[string]bool{
		"http://127.0.0.1:3000/cb":     true,
		"http://127.0.0.1:51234/cb":    true, // RFC 8252 §7.3: any port
		"http://127.0.0.1/cb":          true,
		"http://localhost:9/cb?x=1":    true,
		"https://app.example/cb":       true,
		"com.example.app:/r":           true,
		"http://localhost:3000/cb":     false, // localhost ≠ 127.0.0.1
		"http://[::1]:3000/cb":         false,
		"http://127.0.0.2:3000/cb":     false,
		"https://127.0.0.1:3000/cb":    false,
		"http://127.0.0.1:3000/cb/":    false,
		"http://127.0.0.1:3000/cb?a=b": false,
		"http://127.0.0.1:3000/CB":     false,
		"http://localhost:9/cb":        false, // query must match
		"https://app.example:444/cb":   false, // only loopback gets any port
		"https://app.example/cb/":      false,
		"https://APP.example/cb":       false,
		"com.example.app:/r/x":         false,
		"http://u@127.0.0.1:3000/cb":   false,
		"http://127.0.0.1:3000/cb#x":   false,
	} {
		if got := matchRedirectURI(reg, req); got != want {
			t.Errorf("%q: %v, want %v", req, got, want)
		}
	}
}

func TestApplicationType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		declared string
		uris     []string
		want     string
		fails    bool
	}{
		{"", []string{"https://a.example/cb"}, "web", false},
		{"", []string{"http://127.0.0.1/cb"}, "native", false},
		{"", []string{"https://a.example/cb", "com.example:/r"}, "native", false},
		{"native", []string{"https://a.example/cb"}, "native", false},
		{"web", []string{"http://localhost/cb"}, "", true},
		{"web", []string{"com.example:/r"}, "", true},
		{"spa", []string{"https://a.example/cb"}, "", true},
	} {
		got, err := applicationType(tc.declared, tc.uris)
		if (err != nil) != tc.fails || got != tc.want {
			t.Errorf("%q %v: %q %v", tc.declared, tc.uris, got, err)
		}
	}
}

func TestResourceKey(t *testing.T) {
	t.Parallel()
	same := []string{
		"https://mcp.example/mcp", "https://mcp.example/mcp/", "HTTPS://MCP.EXAMPLE/mcp", "https://mcp.example:443/mcp",
	}
	want, _ := resourceKey(same[0])
	for _, r := range same {
		if got, ok := resourceKey(r); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", r, got, ok, want)
		}
	}
	for _, r := range []string{
		"https://mcp.example/MCP", "https://mcp.example:8443/mcp", "http://mcp.example/mcp", "https://mcp.example/mcp-evil",
		"https://mcp.example/mcp/x", "https://evil.example/mcp",
	} {
		if got, ok := resourceKey(r); ok && got == want {
			t.Errorf("%q is treated as %q", r, want)
		}
	}
	for _, r := range []string{"", "/mcp", "mcp", "https://mcp.example/mcp#f", "https://mcp.example/mcp?x=1", "javascript:alert(1)",
		"https://u@mcp.example/mcp", "ftp://mcp.example/mcp", "https:///mcp", "https://mcp.example/m cp"} {
		if _, ok := resourceKey(r); ok {
			t.Errorf("%q accepted as a resource", r)
		}
	}
	if a, _ := resourceKey("http://[::1]:8080/mcp"); a != "http://[::1]:8080/mcp" {
		t.Errorf("IPv6 resource key %q", a)
	}
}

func TestCheckMetadataURL(t *testing.T) {
	t.Parallel()
	if err := checkMetadataURL("https://client.example/oauth/metadata.json"); err != nil {
		t.Error(err)
	}
	for _, u := range []string{
		"http://client.example/m.json", "https://client.example", "https://client.example/", "https://client.example/m.json?x",
		"https://client.example/m.json#x", "https://u@client.example/m.json", "https://client.example/a/../m.json",
		"https://client.example/./m.json", "https://client.example/%2E%2E/m.json", "https://client.example/ m.json",
		"https://client.example/m.json\x00", "HTTPS://client.example/m.json",
	} {
		if err := checkMetadataURL(u); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}
