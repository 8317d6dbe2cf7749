package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/reqid"
)

// Login sessions. After a password or provider login the browser gets a session cookie
// (HttpOnly, SameSite=Lax, Secure and __Host- under an https issuer) whose random value is
// stored only as its SHA-256 hash in oauth_login_sessions, so every replica honours it. A
// later authorization request from that browser (a step-up for more scopes) skips the login
// form and goes straight to the consent page, which is shown for every request: a session
// never grants a scope by itself. A session ends at /logout, after LoginSessionIdle without
// use or LoginSessionMax after the login, and as soon as the account's password or role
// changes or the account is disabled (checked in SQL on every use). prompt=login and max_age
// (OpenID Connect) are honoured: the password is asked again.

// PathLogout ends the browser's login session.
const PathLogout = "/logout"

// Session lifetimes (Options.LoginSessionIdle, LoginSessionMax).
const (
	DefaultLoginSessionIdle = 30 * time.Minute
	DefaultLoginSessionMax  = 8 * time.Hour
)

// Audit actions of login sessions (capability "oauth"; ids only).
const (
	sessionAuditCapability = "oauth"
	auditSessionStart      = "login_session.start"
	auditSessionUse        = "login_session.use"
	auditSessionEnd        = "login_session.end"
)

func (a *AS) sessionsOn() bool { return a.cfg.LoginSessionIdle > 0 }

func (a *AS) sessionCookieName() string {
	if a.secure {
		return "__Host-neemias_session"
	}
	return "neemias_session"
}

func (a *AS) sessionCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: a.sessionCookieName(), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode,
	}
}

// sessionSecret is the browser's session cookie value ("" without one).
func (a *AS) sessionSecret(r *http.Request) string {
	ck, err := r.Cookie(a.sessionCookieName())
	if err != nil || len(ck.Value) < 43 || len(ck.Value) > 64 {
		return ""
	}
	return ck.Value
}

// startSession gives the browser a new login session for u (ending the one it had). A
// failure costs only the session: the login itself goes on.
func (a *AS) startSession(w http.ResponseWriter, r *http.Request, u loginUser, amr, client string) {
	if !a.sessionsOn() {
		return
	}
	ctx := r.Context()
	if old := a.sessionSecret(r); old != "" {
		a.endSession(ctx, old, client)
	}
	secret := random(32)
	now := a.now()
	n, err := a.q.InsertOAuthLoginSession(ctx, db.InsertOAuthLoginSessionParams{
		IDHash: hash(secret), Amr: amr, AuthTime: now, ChurchID: u.ChurchID, UserID: u.ID,
		IdleExpiresAt: now.Add(a.cfg.LoginSessionIdle), ExpiresAt: now.Add(a.cfg.LoginSessionMax),
	})
	if err != nil || n != 1 {
		a.log.ErrorContext(ctx, "starting a login session", "error", err, "rows", n)
		return
	}
	http.SetCookie(w, a.sessionCookie(secret, int(a.cfg.LoginSessionMax/time.Second)))
	a.auditSession(ctx, u.ChurchID, u.ID, auditSessionStart, client)
}

// sessionUser returns the live session of this browser, sliding its idle deadline; a
// cookie naming no usable session (expired, logged out, the account changed) is deleted
// with its row.
func (a *AS) sessionUser(w http.ResponseWriter, r *http.Request) (db.UseOAuthLoginSessionRow, bool) {
	secret := a.sessionSecret(r)
	if !a.sessionsOn() || secret == "" {
		return db.UseOAuthLoginSessionRow{}, false
	}
	ctx := r.Context()
	s, err := a.q.UseOAuthLoginSession(ctx, db.UseOAuthLoginSessionParams{
		IDHash: hash(secret), IdleSeconds: a.cfg.LoginSessionIdle.Seconds(),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err := a.q.DeleteOAuthLoginSession(ctx, hash(secret)); err == nil {
			a.log.InfoContext(ctx, "a login session ended: expired, or the account's password or role changed or it was disabled")
		}
		http.SetCookie(w, a.sessionCookie("", -1))
		return db.UseOAuthLoginSessionRow{}, false
	}
	if err != nil {
		a.log.ErrorContext(ctx, "loading a login session", "error", err)
		return db.UseOAuthLoginSessionRow{}, false
	}
	return s, true
}

// loginBySession logs the pending request ar in as the browser's session user, unless the
// request demands a fresh login (prompt=login, max_age exceeded). It reports whether it
// answered (a redirect to the consent page).
func (a *AS) loginBySession(w http.ResponseWriter, r *http.Request, ar db.OauthAuthRequest) bool {
	if ar.ForceLogin {
		return false
	}
	s, ok := a.sessionUser(w, r)
	if !ok {
		return false
	}
	if ar.MaxAge != nil && a.now().Sub(s.AuthTime) > time.Duration(*ar.MaxAge)*time.Second {
		return false
	}
	ctx := r.Context()
	n, err := a.q.SetOAuthAuthRequestSessionUser(ctx, db.SetOAuthAuthRequestSessionUserParams{
		ID: ar.ID, UserID: &s.UserID, ChurchID: &s.ChurchID, Role: &s.Role, AuthTime: &s.AuthTime, Amr: &s.Amr,
	})
	if err != nil || n != 1 {
		if err != nil {
			a.log.ErrorContext(ctx, "recording a session login", "error", err)
		}
		return false
	}
	a.auditSession(ctx, s.ChurchID, s.UserID, auditSessionUse, ar.ClientID)
	http.Redirect(w, r, a.cfg.Issuer+PathConsent+"?id="+ar.ID.String(), http.StatusSeeOther)
	return true
}

// endSession deletes the session whose cookie value is secret, if there is one.
func (a *AS) endSession(ctx context.Context, secret, client string) {
	s, err := a.q.DeleteOAuthLoginSession(ctx, hash(secret))
	if errors.Is(err, pgx.ErrNoRows) {
		return
	}
	if err != nil {
		a.log.ErrorContext(ctx, "ending a login session", "error", err)
		return
	}
	a.auditSession(ctx, s.ChurchID, s.UserID, auditSessionEnd, client)
}

func (a *AS) auditSession(ctx context.Context, church, user uuid.UUID, action, client string) {
	err := audit.InsertUserAction(ctx, a.q, church, user, audit.Entry{
		Capability: sessionAuditCapability, Action: action, Outcome: audit.Allowed, ClientID: client,
		Targets: []uuid.UUID{user}, CorrelationID: reqid.From(ctx),
	})
	if err != nil {
		a.log.ErrorContext(ctx, "audit: a login-session event was not recorded", "action", action, "error", err)
	}
}

// logoutView is the logout page.
type logoutView struct {
	Action, CSRF string
	Active, Done bool
}

func logoutCSRF(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("csrf:logout"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// logout: GET shows a button (a GET never ends anything, so a link or an image cannot log a
// person out); POST ends the session. A POST with an authorization request id comes from the
// consent page's "not you?" button: the session ends, the request forgets its user and the
// login page asks again.
func (a *AS) logout(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		secret := a.sessionSecret(r)
		v := logoutView{Action: a.cfg.Issuer + PathLogout, Active: secret != ""}
		if v.Active {
			v.CSRF = logoutCSRF(secret)
		}
		a.render(w, http.StatusOK, "logout", v)
	case http.MethodPost:
		a.postLogout(w, r)
	default:
		a.methodNotAllowed(w, "GET, POST")
	}
}

func (a *AS) postLogout(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if !a.pageForm(w, r) {
		return
	}
	if r.PostForm.Get("id") != "" {
		ar, _, ok := a.postedRequest(w, r, staleFormPt, staleFormEn)
		if !ok {
			return
		}
		if secret := a.sessionSecret(r); secret != "" {
			a.endSession(ctx, secret, ar.ClientID)
		}
		http.SetCookie(w, a.sessionCookie("", -1))
		if _, err := a.q.ClearOAuthAuthRequestUser(ctx, ar.ID); err != nil {
			a.log.ErrorContext(ctx, "clearing the login of a request", "error", err)
			a.errorPage(w, http.StatusServiceUnavailable, "Serviço indisponível no momento. Tente de novo.", "The service is unavailable right now. Try again.")
			return
		}
		http.Redirect(w, r, a.cfg.Issuer+PathLogin+"?id="+ar.ID.String(), http.StatusSeeOther)
		return
	}
	secret := a.sessionSecret(r)
	if secret != "" {
		if !hmac.Equal([]byte(logoutCSRF(secret)), []byte(r.PostForm.Get("csrf"))) {
			a.errorPage(w, http.StatusForbidden, "Formulário inválido ou vencido. Abra a página de saída de novo.", "Invalid or stale form. Open the logout page again.")
			return
		}
		a.endSession(ctx, secret, "")
	}
	http.SetCookie(w, a.sessionCookie("", -1))
	a.render(w, http.StatusOK, "logout", logoutView{Done: true})
}
