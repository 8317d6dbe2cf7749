package oauth

import (
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/capability"
)

// The consent page warns, prominently, for every sensitive scope the approval would grant
// (LGPD art. 14: children's data need the consent of a parent or legal guardian; art. 11:
// health data; guardians' and trusted adults' phones are other people's data). Which scopes
// are sensitive, and each one's warning in Portuguese and English, are the spec's (scopes:
// sensitive, warning; gen/scopes): nothing here names a scope.

type scopeView struct {
	Name, Pt, En string
	Sensitive    bool
}

// warningView is one sensitive scope's LGPD warning.
type warningView struct{ Scope, Pt, En string }

type consentView struct {
	Action         string
	ID, CSRF       string
	ClientName     string
	ClientID       string
	MetadataClient bool
	ClientHost     string
	RedirectHost   string
	LocalhostOnly  bool
	Scopes         []scopeView
	Unavailable    []scopeView
	OpenID         bool
	// Warnings are the LGPD warnings of the sensitive scopes granted, in spec order.
	Warnings []warningView
	// Resource is the server the access is for, when it is not this one (ExtraResources).
	Resource string
	// Account is the email of the person logged in (perhaps by the browser's login session);
	// LogoutAction the "not you?" form's URL, which ends the session and asks for a login.
	Account, LogoutAction string
}

func (a *AS) consent(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		a.showConsent(w, r)
	case http.MethodPost:
		a.postConsent(w, r)
	default:
		a.methodNotAllowed(w, "GET, POST")
	}
}

// showConsent never decides anything: a GET only shows the page.
func (a *AS) showConsent(w http.ResponseWriter, r *http.Request) {
	ar, secret, err := a.pendingRequest(r.Context(), r, r.URL.Query().Get("id"))
	if err != nil {
		a.requestError(w, r, err)
		return
	}
	if ar.UserID == nil {
		http.Redirect(w, r, a.cfg.Issuer+PathLogin+"?id="+ar.ID.String(), http.StatusSeeOther)
		return
	}
	v := consentView{
		Action: a.cfg.Issuer + PathConsent, ID: ar.ID.String(), CSRF: csrfToken(secret, ar.ID), ClientName: ar.ClientName, ClientID: ar.ClientID,
		RedirectHost: redirectHost(ar.RedirectUri), OpenID: ar.Openid, LogoutAction: a.cfg.Issuer + PathLogout,
	}
	if u, err := a.q.OAuthUser(r.Context(), *ar.UserID); err == nil {
		v.Account = u.Email
	}
	if k, ok := resourceKey(ar.Resource); ok && a.extraResources[k] != "" {
		v.Resource = ar.Resource
	}
	if u, err := url.Parse(ar.ClientID); err == nil && u.Scheme == "https" {
		v.MetadataClient, v.ClientHost = true, u.Host
	}
	if u, err := url.Parse(ar.RedirectUri); err == nil && u.Scheme == "http" && isLoopbackHost(u.Hostname()) {
		v.LocalhostOnly = true
	}
	granted := scopes.Grant(*ar.Role, capability.NewScopeSet(ar.Scopes...))
	for _, s := range scopes.All() {
		if !slices.Contains(ar.Scopes, s.Name) {
			continue
		}
		sv := scopeView{Name: s.Name, Pt: s.Pt, En: s.En, Sensitive: s.Sensitive}
		if !granted.Has(s.Name) {
			v.Unavailable = append(v.Unavailable, sv) // not granted: nothing to warn about
			continue
		}
		v.Scopes = append(v.Scopes, sv)
		if s.Sensitive {
			v.Warnings = append(v.Warnings, warningView{Scope: s.Name, Pt: s.WarningPt, En: s.WarningEn})
		}
	}
	a.render(w, http.StatusOK, "consent", v)
}

// postConsent records the decision and answers the client: a code (60 seconds, single use)
// or access_denied. The authorization request is consumed either way.
func (a *AS) postConsent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ar, _, ok := a.postedRequest(w, r, staleFormPt, staleFormEn)
	if !ok {
		return
	}
	if ar.UserID == nil {
		http.Redirect(w, r, a.cfg.Issuer+PathLogin+"?id="+ar.ID.String(), http.StatusSeeOther)
		return
	}
	action := r.PostForm.Get("action")
	if action != "approve" && action != "deny" {
		a.errorPage(w, http.StatusBadRequest, "Escolha permitir ou negar.", "Choose allow or deny.")
		return
	}
	granted := scopes.Grant(*ar.Role, capability.NewScopeSet(ar.Scopes...))
	code := random(32)
	err := a.inTx(ctx, func(q *db.Queries) error {
		taken, err := q.TakeOAuthAuthRequest(ctx, ar.ID)
		if err != nil {
			return err
		}
		decision, recorded := "denied", ar.Scopes
		if action == "approve" {
			decision, recorded = "approved", list(granted)
		}
		if err := q.InsertOAuthConsent(ctx, db.InsertOAuthConsentParams{
			ChurchID: *taken.ChurchID, UserID: *taken.UserID, ClientID: taken.ClientID, ClientName: taken.ClientName,
			RedirectUri: taken.RedirectUri, Scopes: recorded, Decision: decision,
		}); err != nil {
			return err
		}
		event, outcome := auditConsentDenied, audit.Denied
		if action == "approve" {
			event, outcome = auditConsentApproved, audit.Allowed
		}
		if err := auditEvent(ctx, q, *taken.ChurchID, *taken.UserID, taken.ClientID, event, outcome); err != nil {
			return err
		}
		if action != "approve" {
			return nil
		}
		return q.InsertOAuthCode(ctx, db.InsertOAuthCodeParams{
			CodeHash: hash(code), ClientID: taken.ClientID, RedirectUri: taken.RedirectUri,
			CodeChallenge: taken.CodeChallenge, Resource: taken.Resource, Scopes: list(granted),
			Openid: taken.Openid, Nonce: taken.Nonce, UserID: *taken.UserID, ChurchID: *taken.ChurchID,
			Role: *taken.Role, AuthTime: *taken.AuthTime, Amr: deref(taken.Amr), ExpiresAt: a.now().Add(CodeTTL),
		})
	})
	if errors.Is(err, pgx.ErrNoRows) {
		a.requestError(w, r, errRequestGone)
		return
	}
	if err != nil {
		a.log.ErrorContext(ctx, "recording a consent decision", "error", err)
		a.errorPage(w, http.StatusServiceUnavailable, "Serviço indisponível no momento. Tente de novo.", "The service is unavailable right now. Try again.")
		return
	}
	clear := a.bindingCookie(ar.ID, "", 0)
	clear.MaxAge = -1
	http.SetCookie(w, clear)
	params := url.Values{}
	if ar.State != nil {
		params.Set("state", *ar.State)
	}
	if action == "approve" {
		params.Set("code", code)
	} else {
		params.Set("error", "access_denied")
		params.Set("error_description", "the user denied the request")
	}
	pageHeaders(w)
	a.redirectTo(w, r, ar.RedirectUri, params)
}
