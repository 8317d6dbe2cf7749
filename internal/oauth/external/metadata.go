package external

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// MetadataMaxAge is how long a proxied copy of the provider's metadata is served before it is
// fetched again (a stale copy keeps being served while the provider is down).
const MetadataMaxAge = 5 * time.Minute

// metadataCache holds the provider's metadata as proxied on our origin.
type metadataCache struct {
	issuer string
	get    *getter
	now    func() time.Time

	mu      sync.Mutex
	body    []byte
	fetched time.Time
}

// AuthorizationServerMetadata returns the provider's OpenID Provider metadata
// (/.well-known/openid-configuration of the issuer) with "none" added to
// token_endpoint_auth_methods_supported, and nothing else changed: the workaround for
// providers that do not advertise public clients (Keycloak, keycloak#49730), which makes
// public MCP clients give up. The issuer stays the provider's (tokens carry it). A copy is
// reused for MetadataMaxAge, and served stale when a refresh fails; with no copy at all the
// error is unavailable (503 with Retry-After).
func (v *Verifier) AuthorizationServerMetadata(ctx context.Context) ([]byte, error) {
	return v.meta.document(ctx)
}

func (m *metadataCache) document(ctx context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.body != nil && m.now().Sub(m.fetched) < MetadataMaxAge {
		return m.body, nil
	}
	body, err := m.fetch(ctx)
	if err != nil {
		if m.body != nil {
			return m.body, nil
		}
		return nil, unavailable(err, 5*time.Second)
	}
	m.body, m.fetched = body, m.now()
	return body, nil
}

func (m *metadataCache) fetch(ctx context.Context) ([]byte, error) {
	raw, err := m.get.get(ctx, strings.TrimSuffix(m.issuer, "/")+"/.well-known/openid-configuration")
	if err != nil {
		return nil, fmt.Errorf("external: provider metadata: %w", err)
	}
	return withNone(raw, m.issuer)
}

// withNone adds "none" to token_endpoint_auth_methods_supported of a metadata document whose
// issuer is issuer; absent, the member's RFC 8414 default (client_secret_basic) is kept.
func withNone(raw []byte, issuer string) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, errors.New("external: provider metadata: malformed")
	}
	var iss string
	if err := json.Unmarshal(doc["issuer"], &iss); err != nil || iss != issuer {
		return nil, errors.New("external: provider metadata: names a different issuer")
	}
	methods := []string{"client_secret_basic"}
	if m, ok := doc["token_endpoint_auth_methods_supported"]; ok {
		methods = nil
		if err := json.Unmarshal(m, &methods); err != nil {
			return nil, errors.New("external: provider metadata: token_endpoint_auth_methods_supported is not an array of strings")
		}
	}
	if !slices.Contains(methods, "none") {
		methods = append(methods, "none")
	}
	b, _ := json.Marshal(methods)
	doc["token_endpoint_auth_methods_supported"] = b
	return json.Marshal(doc)
}
