package oauth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/oauth/cimd"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages are the login, consent, set-password and error pages, each parsed with the shared layout.
// html/template escapes everything that reaches them (client names come from strangers).
type pages struct {
	byName map[string]*template.Template
}

func newPages() (*pages, error) {
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range []string{"login", "consent", "error", "setpassword", "logout"} {
		t, err := template.ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("oauth: page %s: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

// pageHeaders are set on every page and on /authorize: no framing (clickjacking of the
// consent button), no caching, no referrer (the URLs carry request ids), no scripts at all.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
}

func (a *AS) render(w http.ResponseWriter, status int, name string, data any) {
	pageHeaders(w)
	var buf bytes.Buffer
	if err := a.pages.byName[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		a.log.Error("rendering a page", "page", name, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

type errorView struct {
	Title   string
	Pt, En  string
	BackURL string
	// Code is shown as code (a client_id); Reason marks the page for tests and tools.
	Code, Reason string
}

// errorPage answers with an HTML page and never a redirect: used whenever the client or its
// redirect URI is not established, or the request is not this browser's.
func (a *AS) errorPage(w http.ResponseWriter, status int, pt, en string) {
	a.render(w, status, "error", errorView{Title: "Não foi possível continuar", Pt: pt, En: en})
}

// Browser binding. /authorize sets a cookie holding a random secret whose hash is stored with
// the authorization request; the login and consent pages accept only a browser presenting it,
// and their forms carry a CSRF token derived from it (HMAC of the request id), so a form
// posted from elsewhere, or a request id sent to someone else, is refused.

func (a *AS) cookieName(id uuid.UUID) string {
	name := "neemias_authz_" + strings.ReplaceAll(id.String(), "-", "")[:16]
	if a.secure {
		return "__Host-" + name
	}
	return name
}

func (a *AS) bindingCookie(id uuid.UUID, secret string, ttl time.Duration) *http.Cookie {
	return &http.Cookie{
		Name: a.cookieName(id), Value: secret, Path: "/", MaxAge: int(ttl.Seconds()),
		HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode,
	}
}

func csrfToken(secret string, id uuid.UUID) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("csrf:" + id.String()))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func checkCSRF(secret string, id uuid.UUID, token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(csrfToken(secret, id)), []byte(token)) == 1
}

var (
	errRequestGone = errors.New("authorization request expired or unknown")
	errNotBrowser  = errors.New("authorization request started in another browser")
)

// pendingRequest loads the authorization request id names and checks that this browser
// started it; it returns the browser's secret for the CSRF check.
func (a *AS) pendingRequest(ctx context.Context, r *http.Request, rawID string) (db.OauthAuthRequest, string, error) {
	id, err := uuid.Parse(rawID)
	if err != nil {
		return db.OauthAuthRequest{}, "", errRequestGone
	}
	// A browser that holds no binding cookie for the id costs no lookup; one whose cookie or
	// id is wrong is counted against its address (lookups.go).
	ck, err := r.Cookie(a.cookieName(id))
	if err != nil {
		return db.OauthAuthRequest{}, "", errNotBrowser
	}
	if err := a.lookupAllowed(ctx, r); err != nil {
		return db.OauthAuthRequest{}, "", err
	}
	ar, err := a.q.GetOAuthAuthRequest(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		a.lookupFailed(ctx, r)
		return db.OauthAuthRequest{}, "", errRequestGone
	}
	if err != nil {
		return db.OauthAuthRequest{}, "", err
	}
	if subtle.ConstantTimeCompare(hash(ck.Value), ar.BrowserHash) != 1 {
		a.lookupFailed(ctx, r)
		return db.OauthAuthRequest{}, "", errNotBrowser
	}
	return ar, ck.Value, nil
}

// requestError answers a pendingRequest failure.
func (a *AS) requestError(w http.ResponseWriter, r *http.Request, err error) {
	var spent *lookupsSpent
	switch {
	case errors.As(err, &spent):
		spent.d.SetRetryAfter(w)
		a.errorPage(w, http.StatusTooManyRequests, "Tentativas demais a partir deste endereço. Aguarde um pouco.", "Too many attempts from this address. Wait a little.")
	case errors.Is(err, errRequestGone), errors.Is(err, errNotBrowser):
		a.errorPage(w, http.StatusBadRequest,
			"Esta solicitação de acesso expirou, já foi concluída ou foi iniciada em outro navegador. Volte ao aplicativo e conecte-se de novo.",
			"This access request has expired, was already completed or was started in another browser. Go back to the application and connect again.")
	default:
		a.log.ErrorContext(r.Context(), "loading an authorization request", "error", err)
		a.errorPage(w, http.StatusServiceUnavailable, "Serviço indisponível no momento. Tente de novo.", "The service is unavailable right now. Try again.")
	}
}

// methodNotAllowed answers a method a page does not serve, naming the ones it does.
func (a *AS) methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	a.errorPage(w, http.StatusMethodNotAllowed, "Método não permitido.", "Method not allowed.")
}

// Stale-form texts of the login and consent pages.
const (
	staleFormPt = "Formulário inválido ou vencido. Volte ao aplicativo e conecte-se de novo."
	staleFormEn = "Invalid or stale form. Go back to the application and connect again."
)

// postedRequest is the common front of the pages' POST handlers: it reads the form (at most
// 16 KiB), loads the authorization request it names, checks that this browser started it and
// that the form's CSRF token matches (answering a mismatch with stalePt/staleEn). It returns
// the request and the browser's secret, or false once it has answered with an error page.
func (a *AS) postedRequest(w http.ResponseWriter, r *http.Request, stalePt, staleEn string) (db.OauthAuthRequest, string, bool) {
	if !a.pageForm(w, r) {
		return db.OauthAuthRequest{}, "", false
	}
	ar, secret, err := a.pendingRequest(r.Context(), r, r.PostForm.Get("id"))
	if err != nil {
		a.requestError(w, r, err)
		return db.OauthAuthRequest{}, "", false
	}
	if !checkCSRF(secret, ar.ID, r.PostForm.Get("csrf")) {
		a.errorPage(w, http.StatusForbidden, stalePt, staleEn)
		return db.OauthAuthRequest{}, "", false
	}
	return ar, secret, true
}

// authorize is the front of /authorize: it establishes the client and matches the redirect
// URI exactly before anything may be redirected, answering every failure up to there with an
// error page (never a Location to an unverified URI); then the library's authorization
// handler and our Authorize take over.
func (a *AS) authorize(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		a.methodNotAllowed(w, "GET, POST")
		return
	}
	if a.upstreamOnlyUnusable() {
		a.log.ErrorContext(r.Context(), "authorization refused: login is provider-only (--login-provider-only) but the provider's client secret is not configured (--login-provider-client-secret-file or $NEEMIAS_LOGIN_PROVIDER_CLIENT_SECRET_FILE)")
		a.errorPage(w, http.StatusServiceUnavailable,
			"O login está indisponível: o provedor de login da igreja não está configurado por completo. Avise o administrador.",
			"Login is unavailable: the church's login provider is not fully configured. Tell the administrator.")
		return
	}
	if !a.limitPage(w, r, limitAuthorize) {
		return
	}
	// No parameter twice, in the query and the body together (query.go): a repeated
	// client_id or redirect_uri must never be matched one way and redirected to another.
	if qe, err := readForm(w, r, 64<<10, true, repeatable...); err != nil {
		a.errorPage(w, http.StatusBadRequest, "Solicitação ilegível.", "Unreadable request.")
		return
	} else if qe != nil {
		a.queryErrorPage(w, qe)
		return
	}
	c, err := a.lookupClient(r.Context(), r.Form.Get("client_id"))
	if me, ok := cimd.ReasonOf(err); ok && errors.Is(err, errUnknownClient) {
		a.log.InfoContext(r.Context(), "authorization request for a client whose metadata document was refused", "reason", err, "rule", me.Reason)
		a.metadataErrorPage(w, r.Form.Get("client_id"), me)
		return
	}
	if errors.Is(err, errUnknownClient) {
		a.log.InfoContext(r.Context(), "authorization request for an unknown client", "reason", err)
		a.errorPage(w, http.StatusBadRequest,
			"Aplicativo desconhecido: o client_id não corresponde a nenhum aplicativo registrado.",
			"Unknown application: the client_id matches no registered application.")
		return
	}
	if err != nil {
		a.log.ErrorContext(r.Context(), "loading a client", "error", err)
		a.errorPage(w, http.StatusServiceUnavailable, "Serviço indisponível no momento. Tente de novo.", "The service is unavailable right now. Try again.")
		return
	}
	if ru := r.Form.Get("redirect_uri"); ru == "" || !matchRedirectURI(c.Redirects, ru) {
		if c.FromMetadataDocument {
			a.log.InfoContext(r.Context(), "authorization request with a redirect_uri its metadata document does not list", "client_id", c.ID)
			a.metadataErrorPage(w, c.ID, cimd.NewError(cimd.ReasonRedirectURINotListed, errors.New("redirect_uri not listed")))
			return
		}
		a.errorPage(w, http.StatusBadRequest,
			"O endereço de retorno (redirect_uri) não está registrado para este aplicativo.",
			"The redirect_uri is not registered for this application.")
		return
	}
	a.op.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, c)))
}

// redirectTo sends the browser back to the client with the authorization response: 303, so
// the POSTed credentials are never re-sent (RFC 9700 §4.12), and `iss` (RFC 9207).
func (a *AS) redirectTo(w http.ResponseWriter, r *http.Request, redirectURI string, params url.Values) {
	u, err := url.Parse(redirectURI)
	if err != nil {
		a.errorPage(w, http.StatusBadRequest, "Endereço de retorno inválido.", "Invalid redirect URI.")
		return
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	q.Set("iss", a.cfg.Issuer)
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}
