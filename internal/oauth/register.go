package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"

	"github.com/neemias/neemias-mcp/gen/db"
)

// registration is an RFC 7591 client registration request (the members this server reads;
// others are ignored, as the RFC asks).
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ApplicationType         string   `json:"application_type"`
	ClientURI               string   `json:"client_uri"`
	LogoURI                 string   `json:"logo_uri"`
	SoftwareStatement       string   `json:"software_statement"`
}

// registered is the RFC 7591 §3.2.1 response.
type registered struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ApplicationType         string   `json:"application_type"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
}

// regError is an RFC 7591 §3.2.2 error.
type regError struct {
	code, desc string
}

func (e *regError) Error() string { return e.code + ": " + e.desc }

func badMetadata(format string, args ...any) *regError {
	return &regError{"invalid_client_metadata", fmt.Sprintf(format, args...)}
}

// register is Dynamic Client Registration (RFC 7591), kept for clients of MCP 2025-06-18 that
// know nothing else (2026-07-28 deprecates it for Client ID Metadata Documents). Open, as MCP
// clients expect, so it is rate limited per address; the server chooses the client_id (never
// a URL) and the secret; registrations never used expire after a day.
func (a *AS) register(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request", "error_description": "use POST"})
		return
	}
	if ok, status := a.allow(r.Context(), w, r, limitRegister); !ok {
		desc := "too many registrations from this address; retry later"
		if status != http.StatusTooManyRequests {
			desc = limitMessage(status)
		}
		writeJSON(w, status, map[string]string{"error": "invalid_request", "error_description": desc})
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "the body must be application/json"})
		return
	}
	var req registration
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<10))
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "the body is not a JSON object of client metadata (at most 16 KiB)"})
		return
	}
	resp, secret, err := a.validateRegistration(req)
	if err != nil {
		var re *regError
		if !errors.As(err, &re) {
			re = badMetadata("%v", err)
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": re.code, "error_description": re.desc})
		return
	}
	params := db.InsertOAuthClientParams{
		ClientID: resp.ClientID, ClientName: resp.ClientName, RedirectUris: resp.RedirectURIs,
		GrantTypes: resp.GrantTypes, ResponseTypes: resp.ResponseTypes, ApplicationType: resp.ApplicationType,
		TokenEndpointAuthMethod: resp.TokenEndpointAuthMethod, ClientUri: optional(resp.ClientURI), LogoUri: optional(resp.LogoURI),
	}
	if secret != "" {
		params.ClientSecretHash = hash(secret)
	}
	if err := a.q.InsertOAuthClient(r.Context(), params); err != nil {
		a.log.ErrorContext(r.Context(), "registering a client", "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	a.maybePurge(r.Context())
	a.log.InfoContext(r.Context(), "client registered", "client_id", resp.ClientID, "application_type", resp.ApplicationType)
	writeJSON(w, http.StatusCreated, resp)
}

// validateRegistration checks a registration request and returns the registration the server
// grants (defaults filled in) with the client secret, if any.
func (a *AS) validateRegistration(req registration) (registered, string, error) {
	if req.SoftwareStatement != "" {
		return registered{}, "", &regError{"invalid_software_statement", "software statements are not accepted"}
	}
	if len(req.RedirectURIs) == 0 || len(req.RedirectURIs) > 10 {
		return registered{}, "", &regError{"invalid_redirect_uri", "redirect_uris must list 1 to 10 URIs"}
	}
	for _, u := range req.RedirectURIs {
		if _, err := checkRedirectURI(u); err != nil {
			return registered{}, "", &regError{"invalid_redirect_uri", err.Error()}
		}
	}
	appType, err := applicationType(req.ApplicationType, req.RedirectURIs)
	if errors.Is(err, errBadRedirectURI) {
		return registered{}, "", &regError{"invalid_redirect_uri", err.Error()}
	}
	if err != nil {
		return registered{}, "", badMetadata("%v", err)
	}
	grants := req.GrantTypes
	if len(grants) == 0 {
		grants = []string{"authorization_code", "refresh_token"}
	}
	for _, g := range grants {
		if g != "authorization_code" && g != "refresh_token" {
			return registered{}, "", badMetadata("grant type %q is not supported (authorization_code and refresh_token only)", g)
		}
	}
	if !slices.Contains(grants, "authorization_code") {
		return registered{}, "", badMetadata("grant_types must include authorization_code")
	}
	grants = dedupe(grants)
	responses := req.ResponseTypes
	if len(responses) == 0 {
		responses = []string{"code"}
	}
	for _, rt := range responses {
		if rt != "code" {
			return registered{}, "", badMetadata("response type %q is not supported (code only)", rt)
		}
	}
	method := req.TokenEndpointAuthMethod
	switch method {
	case "":
		method = "client_secret_basic" // RFC 7591 §2's default
	case "none", "client_secret_basic", "client_secret_post":
	default:
		return registered{}, "", badMetadata("token_endpoint_auth_method %q is not supported (none, client_secret_basic, client_secret_post)", method)
	}
	name, err := cleanName(req.ClientName)
	if err != nil {
		return registered{}, "", badMetadata("client_name %v", err)
	}
	if name == "" {
		name = "Aplicativo sem nome"
	}
	for _, u := range []string{req.ClientURI, req.LogoURI} {
		if u != "" && httpsOrEmpty(u) == "" {
			return registered{}, "", badMetadata("client_uri and logo_uri must be https URLs")
		}
	}
	resp := registered{
		ClientID: random(24), ClientIDIssuedAt: a.now().Unix(), ClientName: name,
		RedirectURIs: dedupe(req.RedirectURIs), GrantTypes: grants, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: method, ApplicationType: appType, ClientURI: req.ClientURI, LogoURI: req.LogoURI,
	}
	secret := ""
	if method != "none" {
		secret = random(32)
		resp.ClientSecret = secret
		never := int64(0)
		resp.ClientSecretExpiresAt = &never
	}
	return resp, secret, nil
}

func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
