package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/store"
)

type loginView struct {
	// Action and UpstreamAction are the forms' absolute URLs (under the issuer, which may
	// carry a path behind a proxy).
	Action, UpstreamAction string
	ID, CSRF               string
	ClientName             string
	RedirectHost           string
	Email                  string
	Error                  bool
	Upstream               string
	// UpstreamOnly hides the password form (Upstream.Only).
	UpstreamOnly bool
}

// upstreamOnly reports whether local password logins are off (Upstream.Only).
func (a *AS) upstreamOnly() bool {
	return a.cfg.Upstream != nil && a.cfg.Upstream.Only
}

// upstreamOnlyUnusable reports provider-only login without the provider's client secret:
// nobody can log in, so authorization requests are refused (503) instead of falling back to
// local passwords.
func (a *AS) upstreamOnlyUnusable() bool {
	return a.upstreamOnly() && a.cfg.Upstream.ClientSecret == ""
}

// errBadLogin is a wrong email or password (the page never says which).
var errBadLogin = errors.New("wrong email or password")

// loginUser is who logged in.
type loginUser struct {
	ID, ChurchID uuid.UUID
	Role         string
}

func (a *AS) login(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		a.showLogin(w, r)
	case http.MethodPost:
		a.postLogin(w, r)
	default:
		a.methodNotAllowed(w, "GET, POST")
	}
}

func (a *AS) loginView(ar db.OauthAuthRequest, secret string) loginView {
	v := loginView{Action: a.cfg.Issuer + PathLogin, UpstreamAction: a.cfg.Issuer + PathLoginUpstream, ID: ar.ID.String(), CSRF: csrfToken(secret, ar.ID), ClientName: ar.ClientName, RedirectHost: redirectHost(ar.RedirectUri)}
	if a.upstream != nil {
		v.Upstream = a.upstream.name
	}
	v.UpstreamOnly = a.upstreamOnly()
	return v
}

func (a *AS) showLogin(w http.ResponseWriter, r *http.Request) {
	ar, secret, err := a.pendingRequest(r.Context(), r, r.URL.Query().Get("id"))
	if err != nil {
		a.requestError(w, r, err)
		return
	}
	if ar.UserID != nil {
		http.Redirect(w, r, a.cfg.Issuer+PathConsent+"?id="+ar.ID.String(), http.StatusSeeOther)
		return
	}
	if a.loginBySession(w, r, ar) {
		return
	}
	a.render(w, http.StatusOK, "login", a.loginView(ar, secret))
}

func (a *AS) postLogin(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ar, secret, ok := a.postedRequest(w, r, staleFormPt, staleFormEn)
	if !ok {
		return
	}
	if ar.UserID != nil {
		http.Redirect(w, r, a.cfg.Issuer+PathConsent+"?id="+ar.ID.String(), http.StatusSeeOther)
		return
	}
	if a.upstreamOnly() {
		a.log.InfoContext(ctx, "password login refused: login is provider-only")
		a.render(w, http.StatusForbidden, "error", errorView{
			Title:   "Login com senha desativado",
			Pt:      "Este servidor aceita apenas o login pelo provedor da igreja.",
			En:      "This server accepts only login through the church's provider.",
			BackURL: a.cfg.Issuer + PathLogin + "?id=" + ar.ID.String(),
		})
		return
	}
	if ar.LoginFailures >= MaxLoginFailures {
		a.errorPage(w, http.StatusForbidden, "Tentativas demais. Volte ao aplicativo e conecte-se de novo.", "Too many attempts. Go back to the application and connect again.")
		return
	}
	if !a.limitPage(w, r, limitLogin) {
		return
	}
	email := strings.TrimSpace(r.PostForm.Get("email"))
	password := r.PostForm.Get("password")
	u, err := a.checkPassword(ctx, email, password)
	if errors.Is(err, errBadLogin) {
		if _, err := a.q.CountOAuthLoginFailure(ctx, ar.ID); err != nil {
			a.log.ErrorContext(ctx, "counting a login failure", "error", err)
		}
		a.auditBestEffort(ctx, uuid.Nil, uuid.Nil, ar.ClientID, auditLoginFailed, audit.Denied) // no account named: an email is personal data
		v := a.loginView(ar, secret)
		v.Error, v.Email = true, email
		a.render(w, http.StatusUnauthorized, "login", v)
		return
	}
	if err != nil {
		a.log.ErrorContext(ctx, "checking a password", "error", err)
		a.errorPage(w, http.StatusServiceUnavailable, "Serviço indisponível no momento. Tente de novo.", "The service is unavailable right now. Try again.")
		return
	}
	a.loggedIn(w, r, ar, u, "pwd")
}

// loggedIn records who logged in on the authorization request, starts the browser's login
// session and moves on to consent.
func (a *AS) loggedIn(w http.ResponseWriter, r *http.Request, ar db.OauthAuthRequest, u loginUser, amr string) {
	id := ar.ID
	n, err := a.q.SetOAuthAuthRequestUser(r.Context(), db.SetOAuthAuthRequestUserParams{
		ID: id, UserID: &u.ID, ChurchID: &u.ChurchID, Role: &u.Role, Amr: &amr,
	})
	if err != nil {
		a.log.ErrorContext(r.Context(), "recording a login", "error", err)
		a.errorPage(w, http.StatusServiceUnavailable, "Serviço indisponível no momento. Tente de novo.", "The service is unavailable right now. Try again.")
		return
	}
	if n != 1 {
		a.requestError(w, r, errRequestGone)
		return
	}
	a.startSession(w, r, u, amr, ar.ClientID)
	http.Redirect(w, r, a.cfg.Issuer+PathConsent+"?id="+id.String(), http.StatusSeeOther)
}

// checkPassword finds the one enabled account with this email whose argon2id hash matches.
// It does the same hashing work whether or not the email exists (a dummy hash stands in), so
// response time does not tell which emails have accounts. A person with accounts in several
// churches is not supported: two matches log in nowhere.
func (a *AS) checkPassword(ctx context.Context, email, password string) (loginUser, error) {
	if len(email) > 320 || len(password) > 1024 {
		_, _ = store.CheckPassword(a.dummyHash, password[:min(len(password), 1024)])
		return loginUser{}, errBadLogin
	}
	var cands []db.LoginCandidatesRow
	err := a.cfg.Store.InTx(ctx, store.Anonymous, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		cands, err = db.New(tx).LoginCandidates(ctx, email)
		return err
	})
	if err != nil {
		return loginUser{}, fmt.Errorf("login candidates: %w", err)
	}
	var matches []loginUser
	checked := false
	for _, c := range cands {
		if c.PasswordHash == nil || *c.PasswordHash == "" {
			continue
		}
		checked = true
		ok, err := store.CheckPassword(*c.PasswordHash, password)
		if err != nil {
			a.log.WarnContext(ctx, "unreadable password hash", "user_id", c.ID)
			continue
		}
		if ok {
			matches = append(matches, loginUser{ID: c.ID, ChurchID: c.ChurchID, Role: c.Role})
		}
	}
	if !checked {
		_, _ = store.CheckPassword(a.dummyHash, password)
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return loginUser{}, errBadLogin
	default:
		a.log.WarnContext(ctx, "one email and password match accounts in several churches; refused", "accounts", len(matches))
		return loginUser{}, errBadLogin
	}
}
