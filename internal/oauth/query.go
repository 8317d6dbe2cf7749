package oauth

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/neemias/neemias-mcp/internal/httpx"
)

// Parameters are read as written (RFC 6749 §3.1: request parameters MUST NOT be included more
// than once): a parameter given twice, or a ";" used as a separator (which Go's readers drop
// with the whole pair, silently for r.URL.Query()), is refused with an answer naming the
// parameter, by the rule every surface shares (httpx.CheckQuery). Only RFC 8707's resource may
// repeat, on /authorize and /token. Pages answer with the error page, before anything is
// looked up or redirected (a repeated client_id or redirect_uri must never be redirected
// to); the token and revocation endpoints with invalid_request.

// repeatable are the parameters that may be given more than once (RFC 8707 §2).
var repeatable = []string{"resource"}

// checkedPage refuses a page request whose URL query breaks the rule, with the error page.
func (a *AS) checkedPage(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if qe := httpx.CheckQuery(r.URL.RawQuery); qe != nil {
			pageHeaders(w)
			a.queryErrorPage(w, qe)
			return
		}
		next(w, r)
	}
}

// queryErrorPage is the error page of a refused query or form, in both languages.
func (a *AS) queryErrorPage(w http.ResponseWriter, qe *httpx.QueryError) {
	var pt, en string
	switch qe.Kind {
	case httpx.QueryRepeated:
		pt, en = fmt.Sprintf("Parâmetro repetido: %q.", qe.Param), fmt.Sprintf("Repeated parameter: %q.", qe.Param)
	case httpx.QuerySemicolon:
		pt = fmt.Sprintf(`Parâmetro %q: ";" não separa parâmetros (use "&").`, qe.Param)
		en = fmt.Sprintf(`Parameter %q: ";" does not separate parameters (use "&").`, qe.Param)
	default:
		pt, en = fmt.Sprintf("Parâmetro %q mal codificado.", qe.Param), fmt.Sprintf("Parameter %q is malformed (percent-encoding).", qe.Param)
	}
	a.errorPage(w, http.StatusBadRequest, pt, en)
}

// readForm reads r's application/x-www-form-urlencoded body (at most limit bytes), checks it
// by the rule (together with the URL's query when withQuery is set: r.Form merges both, so a
// parameter in each is given twice), and parses it into r.Form and r.PostForm. A refusal is
// returned as a *httpx.QueryError; err is an unreadable body.
func readForm(w http.ResponseWriter, r *http.Request, limit int64, withQuery bool, repeatable ...string) (*httpx.QueryError, error) {
	if r.PostForm != nil {
		return nil, nil // read and checked already (postLogout, then postedRequest)
	}
	var body []byte
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); r.Body != nil && mt == "application/x-www-form-urlencoded" &&
		(r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch) {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		if err != nil {
			return nil, err
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	raw := string(body)
	if withQuery && r.URL.RawQuery != "" {
		raw = r.URL.RawQuery + "&" + raw
	}
	if qe := httpx.CheckQuery(raw, repeatable...); qe != nil {
		return qe, nil
	}
	return nil, r.ParseForm()
}

// pageForm reads a page's posted form (at most 16 KiB) by the rule; false once it has answered
// with the error page.
func (a *AS) pageForm(w http.ResponseWriter, r *http.Request) bool {
	qe, err := readForm(w, r, 16<<10, true)
	switch {
	case err != nil:
		a.errorPage(w, http.StatusBadRequest, "Formulário ilegível.", "Unreadable form.")
		return false
	case qe != nil:
		a.queryErrorPage(w, qe)
		return false
	}
	return true
}
