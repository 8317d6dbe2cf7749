package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/zitadel/oidc/v3/pkg/client/rp"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"golang.org/x/oauth2"

	"github.com/neemias/neemias-mcp/gen/db"
)

// upstreamLogin logs people in through the church's OpenID Connect provider (zitadel/oidc
// rp): authorization code with PKCE, state and nonce kept on the authorization request in
// PostgreSQL (so the callback may land on any replica), the ID token verified by rp (issuer,
// audience, signature against the provider's JWKS, expiry, nonce), and the account mapped to
// a local user by issuer and subject through oauth_upstream_identities.
type upstreamLogin struct {
	a    *AS
	cfg  Upstream
	name string

	mu    sync.Mutex
	party rp.RelyingParty
}

type nonceKey struct{}

func newUpstreamLogin(a *AS, u Upstream) *upstreamLogin {
	name := u.Name
	if name == "" {
		name = "provedor da igreja"
	}
	return &upstreamLogin{a: a, cfg: u, name: name}
}

// relyingParty discovers the provider on first use (and retries after a failure).
func (u *upstreamLogin) relyingParty(ctx context.Context) (rp.RelyingParty, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.party != nil {
		return u.party, nil
	}
	client := u.cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	scopes := u.cfg.Scopes
	if len(scopes) == 0 {
		scopes = []string{oidc.ScopeOpenID}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	p, err := rp.NewRelyingPartyOIDC(ctx, u.cfg.Issuer, u.cfg.ClientID, u.cfg.ClientSecret,
		u.a.cfg.Issuer+PathLoginCallback, scopes,
		rp.WithHTTPClient(client),
		rp.WithVerifierOpts(rp.WithNonce(func(ctx context.Context) string {
			n, _ := ctx.Value(nonceKey{}).(string)
			return n
		})),
	)
	if err != nil {
		return nil, fmt.Errorf("discovering the upstream provider: %w", err)
	}
	u.party = p
	return p, nil
}

// upstreamStart (POST /login/upstream, from the login page's button) sends the browser to the
// provider.
func (a *AS) upstreamStart(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if r.Method != http.MethodPost {
		a.methodNotAllowed(w, "POST")
		return
	}
	ar, _, ok := a.postedRequest(w, r, "Formulário inválido ou vencido.", "Invalid or stale form.")
	if !ok {
		return
	}
	party, err := a.upstream.relyingParty(ctx)
	if err != nil {
		a.log.ErrorContext(ctx, "upstream provider unavailable", "error", err)
		a.errorPage(w, http.StatusBadGateway, "O provedor de login da igreja não está disponível. Tente de novo ou entre com e-mail e senha.",
			"The church's login provider is unavailable. Try again or log in with email and password.")
		return
	}
	state, nonce, verifier := random(32), random(16), random(32)
	n, err := a.q.SetOAuthUpstreamLogin(ctx, db.SetOAuthUpstreamLoginParams{
		ID: ar.ID, UpstreamStateHash: hash(state), UpstreamNonce: &nonce, UpstreamVerifier: &verifier,
	})
	if err != nil || n != 1 {
		if err != nil {
			a.log.ErrorContext(ctx, "storing the upstream login state", "error", err)
		}
		a.requestError(w, r, errRequestGone)
		return
	}
	to := rp.AuthURL(state, party, rp.WithCodeChallenge(oidc.NewSHACodeChallenge(verifier)),
		func() []oauth2.AuthCodeOption { return []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("nonce", nonce)} })
	pageHeaders(w)
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// upstreamCallback (GET /login/callback) completes the provider's login: the state must name
// a pending request of this browser, the code is exchanged with the stored PKCE verifier and
// the ID token verified with the stored nonce; the account must be linked to a local user.
func (a *AS) upstreamCallback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	ar, err := a.q.GetOAuthAuthRequestByUpstreamState(ctx, hash(q.Get("state")))
	if errors.Is(err, pgx.ErrNoRows) || q.Get("state") == "" {
		a.requestError(w, r, errRequestGone)
		return
	}
	if err != nil {
		a.requestError(w, r, err)
		return
	}
	if _, _, err := a.pendingRequest(ctx, r, ar.ID.String()); err != nil {
		a.requestError(w, r, err)
		return
	}
	if q.Get("error") != "" || q.Get("code") == "" || ar.UpstreamNonce == nil || ar.UpstreamVerifier == nil {
		a.render(w, http.StatusBadRequest, "error", errorView{
			Title:   "Login não concluído",
			Pt:      "O login no provedor da igreja não foi concluído.",
			En:      "The login at the church's provider was not completed.",
			BackURL: a.cfg.Issuer + PathLogin + "?id=" + ar.ID.String(),
		})
		return
	}
	party, err := a.upstream.relyingParty(ctx)
	if err != nil {
		a.log.ErrorContext(ctx, "upstream provider unavailable", "error", err)
		a.errorPage(w, http.StatusBadGateway, "O provedor de login da igreja não está disponível.", "The church's login provider is unavailable.")
		return
	}
	toks, err := rp.CodeExchange[*oidc.IDTokenClaims](context.WithValue(ctx, nonceKey{}, *ar.UpstreamNonce), q.Get("code"), party,
		rp.WithCodeVerifier(*ar.UpstreamVerifier))
	if err != nil || toks.IDTokenClaims == nil {
		a.log.WarnContext(ctx, "upstream code exchange or ID token verification failed", "error", err)
		a.errorPage(w, http.StatusBadGateway, "Não foi possível confirmar o login no provedor da igreja.", "The login at the church's provider could not be verified.")
		return
	}
	user, err := a.q.OAuthUpstreamIdentity(ctx, db.OAuthUpstreamIdentityParams{
		Issuer: NormalizeIssuer(toks.IDTokenClaims.GetIssuer()), Subject: toks.IDTokenClaims.GetSubject(),
	})
	if errors.Is(err, pgx.ErrNoRows) || err == nil && user.DisabledAt != nil {
		// The subject is what the operator links with `neemias-mcp identity link` (issue 25).
		a.log.WarnContext(ctx, "login provider account not linked to an active user; link it with neemias-mcp identity link",
			"issuer", toks.IDTokenClaims.GetIssuer(), "subject", toks.IDTokenClaims.GetSubject())
		a.errorPage(w, http.StatusForbidden,
			"Esta conta do provedor da igreja não está vinculada a um usuário ativo do Neemias. Peça ao administrador da igreja para vinculá-la.",
			"This account of the church's provider is not linked to an active Neemias user. Ask the church administrator to link it.")
		return
	}
	if err != nil {
		a.requestError(w, r, err)
		return
	}
	a.loggedIn(w, r, ar, loginUser{ID: user.ID, ChurchID: user.ChurchID, Role: user.Role}, "fed")
}
