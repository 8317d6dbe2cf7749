package oauth

import (
	"net/url"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// resourceKey normalises a resource indicator (RFC 8707) for comparison: absolute, no
// fragment, no userinfo, no query; scheme and host lower-case, the default port dropped, one
// trailing slash ignored. ok is false for anything that cannot name a resource.
func resourceKey(raw string) (key string, ok bool) {
	if raw == "" || len(raw) > maxURILen || strings.ContainsAny(raw, "# \t\r\n\\") {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.User != nil || u.Host == "" || u.RawQuery != "" || u.ForceQuery {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" && !(scheme == "https" && p == "443") && !(scheme == "http" && p == "80") {
		host += ":" + p
	}
	return scheme + "://" + host + strings.TrimSuffix(u.EscapedPath(), "/"), true
}

// resolveResource maps the `resource` parameters of a request to the canonical resource this
// server issues tokens for: none means this server's MCP endpoint; one must be an equivalent
// form of it or of an alias, which resolves to that URL as configured, or of an
// Options.ExtraResources entry, which resolves to that entry; anything else is
// invalid_target (RFC 8707 §2).
func (a *AS) resolveResource(values []string) (string, *oidc.Error) {
	switch len(values) {
	case 0:
		return a.cfg.Resource, nil
	case 1:
	default:
		return "", oidc.ErrInvalidTarget().WithDescription("only one resource may be requested")
	}
	key, ok := resourceKey(values[0])
	if !ok {
		return "", oidc.ErrInvalidTarget().WithDescription("the resource must be an absolute URL without fragment or query")
	}
	if own, ok := a.resources[key]; ok {
		return own, nil
	}
	if extra, ok := a.extraResources[key]; ok {
		return extra, nil
	}
	return "", oidc.ErrInvalidTarget().WithDescription("this server issues tokens only for %s", a.cfg.Resource)
}
