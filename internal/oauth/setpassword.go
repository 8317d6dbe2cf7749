package oauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/neemias/neemias-mcp/internal/password"
	"github.com/neemias/neemias-mcp/internal/store"
)

// PathSetPassword is the page where a person redeems the one-time set-password link an
// operator printed (`neemias-mcp user add`, `user reset-password`; internal/password keeps the
// codes). It follows the login page's conventions: the pages' anti-framing, no-store and
// no-referrer headers (render), Portuguese with English, a CSRF token bound to a
// browser cookie (HttpOnly, SameSite=Lax, __Host- and Secure under an https issuer), the
// login's per-address limiter, and one answer for every code that cannot be used, which
// tells nothing about the account. The code is never logged.
const PathSetPassword = password.PathSetPassword

// setPasswordView is the set-password page.
type setPasswordView struct {
	Action, CSRF string
	// Code is the code of the link (a hidden field); AskCode shows a field for a code typed
	// by hand instead (the page opened without one).
	Code    string
	AskCode bool
	// Email is the account of a usable code (for the person and their password manager).
	Email            string
	ErrorPt, ErrorEn string
	MinLen           int
	Done             bool
}

func (a *AS) setPassword(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		a.showSetPassword(w, r)
	case http.MethodPost:
		a.postSetPassword(w, r)
	default:
		a.methodNotAllowed(w, "GET, POST")
	}
}

// setPasswordOff answers provider-only login, where a local password would be useless.
func (a *AS) setPasswordOff(w http.ResponseWriter) bool {
	if !a.upstreamOnly() {
		return false
	}
	a.render(w, http.StatusForbidden, "error", errorView{
		Title: "Login com senha desativado",
		Pt:    "Este servidor aceita apenas o login pelo provedor da igreja; não há senha a definir.",
		En:    "This server accepts only login through the church's provider; there is no password to set.",
	})
	return true
}

// setPasswordLimit takes a token of the login's per-address limiter for every attempt with a
// code, or answers 429.
func (a *AS) setPasswordLimit(w http.ResponseWriter, r *http.Request) bool {
	return a.limitPage(w, r, limitLogin)
}

func (a *AS) showSetPassword(w http.ResponseWriter, r *http.Request) {
	if a.setPasswordOff(w) {
		return
	}
	secret := a.setPasswordSecret(r)
	if secret == "" {
		secret = random(32)
		http.SetCookie(w, &http.Cookie{
			Name: a.setPasswordCookie(), Value: secret, Path: "/", MaxAge: 3600,
			HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode,
		})
	}
	v := a.setPasswordForm(secret)
	code := r.URL.Query().Get("code")
	if code == "" {
		v.AskCode = true
		a.render(w, http.StatusOK, "setpassword", v)
		return
	}
	if !a.setPasswordLimit(w, r) {
		return
	}
	email, err := password.CodeAccount(r.Context(), a.cfg.Store, code)
	if err != nil {
		a.setPasswordCodeError(w, r, err)
		return
	}
	v.Code, v.Email = code, email
	a.render(w, http.StatusOK, "setpassword", v)
}

func (a *AS) postSetPassword(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if !a.pageForm(w, r) {
		return
	}
	if a.setPasswordOff(w) {
		return
	}
	secret := a.setPasswordSecret(r)
	if secret == "" || !hmac.Equal([]byte(setPasswordCSRF(secret)), []byte(r.PostForm.Get("csrf"))) {
		a.errorPage(w, http.StatusForbidden,
			"Formulário inválido ou vencido. Abra de novo o link que você recebeu.",
			"Invalid or stale form. Open the link you received again.")
		return
	}
	if !a.setPasswordLimit(w, r) {
		return
	}
	code := strings.TrimSpace(r.PostForm.Get("code"))
	email, err := password.CodeAccount(ctx, a.cfg.Store, code)
	if err != nil {
		a.setPasswordCodeError(w, r, err)
		return
	}
	pw := r.PostForm.Get("password")
	v := a.setPasswordForm(secret)
	v.Code, v.Email = code, email
	switch err := store.CheckNewPassword(pw); {
	case pw != r.PostForm.Get("password2"):
		v.ErrorPt, v.ErrorEn = "As duas senhas não são iguais. Nada foi alterado.", "The two passwords differ. Nothing was changed."
	case errors.Is(err, store.ErrPasswordTooShort):
		v.ErrorPt, v.ErrorEn = "A senha é curta demais: use pelo menos "+strconv.Itoa(store.MinPasswordLen)+" caracteres. Nada foi alterado.",
			"The password is too short: use at least "+strconv.Itoa(store.MinPasswordLen)+" characters. Nothing was changed."
	case err != nil:
		v.ErrorPt, v.ErrorEn = "A senha é longa demais. Nada foi alterado.", "The password is too long. Nothing was changed."
	}
	if v.ErrorPt != "" {
		a.render(w, http.StatusBadRequest, "setpassword", v)
		return
	}
	if err := password.Redeem(ctx, a.cfg.Store, code, pw); err != nil {
		a.setPasswordCodeError(w, r, err)
		return
	}
	a.log.InfoContext(ctx, "a password was set with a one-time link")
	http.SetCookie(w, &http.Cookie{Name: a.setPasswordCookie(), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode})
	a.render(w, http.StatusOK, "setpassword", setPasswordView{Done: true, Email: email})
}

func (a *AS) setPasswordForm(secret string) setPasswordView {
	return setPasswordView{Action: a.cfg.Issuer + PathSetPassword, CSRF: setPasswordCSRF(secret), MinLen: store.MinPasswordLen}
}

// setPasswordCodeError answers a code that cannot be used, whatever the reason, with one page.
func (a *AS) setPasswordCodeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, password.ErrCodeInvalid) {
		a.log.InfoContext(r.Context(), "set-password: a code that cannot be used")
		a.render(w, http.StatusBadRequest, "error", errorView{
			Title: "Link inválido ou vencido",
			Pt:    "Este link para definir a senha não vale: está incompleto, venceu ou já foi usado. Peça um novo ao administrador da igreja.",
			En:    "This set-password link is not valid: it is incomplete, has expired or was used already. Ask the church's administrator for a new one.",
		})
		return
	}
	a.log.ErrorContext(r.Context(), "set-password", "error", err)
	a.errorPage(w, http.StatusServiceUnavailable, "Serviço indisponível no momento. Tente de novo.", "The service is unavailable right now. Try again.")
}

func (a *AS) setPasswordCookie() string {
	if a.secure {
		return "__Host-neemias_setpw"
	}
	return "neemias_setpw"
}

// setPasswordSecret is this browser's CSRF secret ("" without the cookie).
func (a *AS) setPasswordSecret(r *http.Request) string {
	ck, err := r.Cookie(a.setPasswordCookie())
	if err != nil || len(ck.Value) < 32 {
		return ""
	}
	return ck.Value
}

func setPasswordCSRF(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("csrf:set-password"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
