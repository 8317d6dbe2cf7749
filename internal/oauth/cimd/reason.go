package cimd

import "errors"

// Reason says which rule a client_id or its metadata document broke, in terms the person who
// sees the authorization server's error page (usually the client's developer) can act on.
// Every error of Fetch and ParseClientID carries one (ReasonOf); the error's message, for
// the log, has the detail. Neither ever holds the response body or a resolved address.
type Reason string

const (
	// ReasonNotHTTPS: the client_id is a URL but not https.
	ReasonNotHTTPS Reason = "not_https"
	// ReasonBadURL: the client_id is not an acceptable metadata URL (no path, userinfo,
	// fragment, dot segments, a numeric or local host name, …).
	ReasonBadURL Reason = "bad_url"
	// ReasonAddress: the host resolves to (or connected to) an address that is not public.
	ReasonAddress Reason = "address_not_allowed"
	// ReasonUnreachable: DNS, connection, TLS or timeout: no answer was had.
	ReasonUnreachable Reason = "unreachable"
	// ReasonRedirect: the URL answered with a redirect, which is never followed.
	ReasonRedirect Reason = "redirect"
	// ReasonStatus: the URL answered with a status other than 200 (Error.Status).
	ReasonStatus Reason = "http_status"
	// ReasonContentType: the answer is not JSON (application/json or +json).
	ReasonContentType Reason = "content_type"
	// ReasonTooLarge: the document is larger than the limit (5 KiB by default).
	ReasonTooLarge Reason = "too_large"
	// ReasonInvalidJSON: the document is not one well-formed JSON object (UTF-8, no
	// duplicate members, nothing after it).
	ReasonInvalidJSON Reason = "invalid_json"
	// ReasonClientIDMismatch: the document's client_id is not, byte for byte, its URL.
	ReasonClientIDMismatch Reason = "client_id_mismatch"
	// ReasonInvalidMember: a member breaks a rule (Error.Member names it).
	ReasonInvalidMember Reason = "invalid_member"
	// ReasonRedirectURINotListed: the authorization request's redirect_uri is not among the
	// document's redirect_uris (the authorization server's check, not the fetcher's).
	ReasonRedirectURINotListed Reason = "redirect_uri_not_listed"
)

// Error is a classified failure. errors.Is still finds its kind (ErrNotMetadataURL,
// ErrForbiddenAddress, ErrFetch, ErrInvalidDocument).
type Error struct {
	Reason Reason
	// Member is the document member at fault (ReasonInvalidMember): one of the member names
	// this package knows, never text from the document.
	Member string
	// Status is the HTTP status of a ReasonStatus or ReasonRedirect answer.
	Status int
	err    error
}

func (e *Error) Error() string { return e.err.Error() }
func (e *Error) Unwrap() error { return e.err }

// NewError classifies err (for the authorization server's own checks of a document).
func NewError(r Reason, err error) *Error { return &Error{Reason: r, err: err} }

// ReasonOf returns the classification of err, if it has one.
func ReasonOf(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

func because(r Reason, err error) error { return &Error{Reason: r, err: err} }

// knownMembers are the member names an Error may carry.
var knownMembers = []string{
	"client_id", "client_name", "redirect_uris", "grant_types", "response_types", "token_endpoint_auth_method",
	"client_uri", "logo_uri", "tos_uri", "policy_uri", "jwks_uri", "jwks", "scope", "software_id",
	"software_version", "client_secret", "client_secret_expires_at",
}

func invalidMember(member string, err error) error {
	e := &Error{Reason: ReasonInvalidMember, err: err}
	for _, m := range knownMembers {
		if m == member {
			e.Member = m
		}
	}
	return e
}

func withStatus(err error, status int) error {
	if e, ok := err.(*Error); ok {
		e.Status = status
	}
	return err
}

// NewInvalidMember classifies err as a broken rule of document member (one of the names this
// package knows; any other is dropped).
func NewInvalidMember(member string, err error) *Error {
	return invalidMember(member, err).(*Error)
}
