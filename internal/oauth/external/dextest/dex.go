package dextest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/neemias/neemias-mcp/internal/freeport"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// Client is a static client of Dex (Dex has no client registration).
type Client struct {
	ID     string `json:"id"`
	Secret string `json:"secret,omitempty"`
	Name   string `json:"name"`
	// Public clients have no secret; without RedirectURIs Dex then accepts any loopback
	// redirect (http://127.0.0.1:PORT/…, http://localhost:PORT/…), which is what MCP clients
	// on the desktop use.
	Public       bool     `json:"public,omitempty"`
	RedirectURIs []string `json:"redirectURIs,omitempty"`
	// TrustedPeers may ask tokens whose aud is this client (scope
	// audience:server:client_id:<this id>).
	TrustedPeers []string `json:"trustedPeers,omitempty"`
}

// User is an account of Dex's local password database (connector id "local").
type User struct {
	Email, Username, UserID, Password string
	Groups                            []string
}

// Subject is the sub Dex gives u: base64url of a protobuf of its user id and connector id.
func (u User) Subject() string { return EncodeSubject(u.UserID, "local") }

// EncodeSubject is Dex's sub for the connector's user id (internal.IDTokenSubject, marshalled
// and base64url-encoded without padding).
func EncodeSubject(userID, connector string) string {
	var b []byte
	for i, s := range []string{userID, connector} {
		b = append(b, byte(i+1)<<3|2)
		for n := len(s); ; n >>= 7 {
			if n < 0x80 {
				b = append(b, byte(n))
				break
			}
			b = append(b, byte(n)|0x80)
		}
		b = append(b, s...)
	}
	return base64URL(b)
}

// Config is what the test's Dex knows.
type Config struct {
	Clients []Client
	Users   []User
}

// Dex is a running Dex.
type Dex struct {
	// Issuer is http://127.0.0.1:PORT/dex.
	Issuer string
	cmd    *exec.Cmd
	out    *testsupport.Buffer
	once   sync.Once
	done   chan struct{}
}

// Start runs Dex on a free loopback port (plain http, in-memory storage, the approval
// screen skipped, the password grant on the local connector), and waits for its discovery.
// It is stopped when tb ends.
func Start(tb testing.TB, cfg Config) *Dex {
	tb.Helper()
	bin := Binary(tb)
	addr, err := freeport.Addr()
	if err != nil {
		tb.Fatal(err)
	}
	d := &Dex{Issuer: "http://" + addr + "/dex", out: &testsupport.Buffer{}, done: make(chan struct{})}
	var users []map[string]any
	for _, u := range cfg.Users {
		hash, err := bcrypt.GenerateFromPassword([]byte(u.Password), bcrypt.DefaultCost) // Dex refuses a cost under 10
		if err != nil {
			tb.Fatal(err)
		}
		users = append(users, map[string]any{"email": u.Email, "hash": string(hash), "username": u.Username, "userID": u.UserID,
			"emailVerified": true, "groups": u.Groups})
	}
	conf := map[string]any{
		"issuer":           d.Issuer,
		"storage":          map[string]any{"type": "memory"},
		"web":              map[string]any{"http": addr},
		"logger":           map[string]any{"level": "debug", "format": "json"},
		"oauth2":           map[string]any{"skipApprovalScreen": true, "passwordConnector": "local"},
		"enablePasswordDB": true,
		"staticPasswords":  users,
		"staticClients":    cfg.Clients,
	}
	b, _ := json.MarshalIndent(conf, "", "  ") // JSON is YAML
	file := filepath.Join(tb.TempDir(), "dex.yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	d.cmd = exec.Command(bin, "serve", file)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }()
	tb.Cleanup(func() {
		d.Stop()
		if tb.Failed() {
			tb.Logf("Dex %s output:\n%s", Version, d.out.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(d.Issuer + "/.well-known/openid-configuration")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return d
			}
		}
		select {
		case <-d.done:
			tb.Fatalf("Dex exited:\n%s", d.out.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("Dex did not come up:\n%s", d.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop interrupts Dex and waits for it.
func (d *Dex) Stop() {
	d.once.Do(func() {
		_ = d.cmd.Process.Signal(os.Interrupt)
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	})
}

// Output is what Dex logged so far.
func (d *Dex) Output() string { return d.out.String() }

// Token is a token endpoint answer.
type Token struct {
	Status      int
	AccessToken string `json:"access_token"`
	IDToken     string `json:"id_token"`
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// PasswordToken asks Dex for tokens with the password grant (local connector) as client.
func (d *Dex) PasswordToken(tb testing.TB, c Client, username, password, scope string) Token {
	tb.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {username}, "password": {password}, "scope": {scope}}
	req, _ := http.NewRequest(http.MethodPost, d.Issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var t Token
	if err := json.Unmarshal(body, &t); err != nil {
		tb.Fatalf("Dex token endpoint: %d %s", resp.StatusCode, body)
	}
	t.Status = resp.StatusCode
	if t.Status != http.StatusOK {
		tb.Logf("Dex token endpoint: %d %s", resp.StatusCode, body)
	}
	return t
}

func base64URL(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// AuthorizationCode runs the authorization code flow with PKCE as a public client would, the
// browser's part included (Dex's password form of the local connector, filled in as
// username/password), and exchanges the code; extra are more authorization parameters.
func (d *Dex) AuthorizationCode(tb testing.TB, c Client, redirectURI, scope, username, password string, extra url.Values) Token {
	tb.Helper()
	verifier := base64URL([]byte(fmt.Sprintf("%032d-%d", time.Now().UnixNano(), os.Getpid())))
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"client_id": {c.ID}, "redirect_uri": {redirectURI}, "response_type": {"code"}, "scope": {scope},
		"state": {"st-1"}, "code_challenge": {base64URL(sum[:])}, "code_challenge_method": {"S256"}}
	for k, v := range extra {
		q[k] = v
	}
	jar, _ := cookiejar.New(nil)
	var callback *url.URL
	browser := &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), redirectURI) {
			callback = r.URL
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := browser.Get(d.Issuer + "/auth?" + q.Encode())
	if err != nil {
		tb.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if callback == nil {
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), `name="password"`) {
			tb.Fatalf("Dex authorization: %d at %s, no password form:\n%s", resp.StatusCode, resp.Request.URL, page)
		}
		resp, err = browser.PostForm(resp.Request.URL.String(), url.Values{"login": {username}, "password": {password}})
		if err != nil {
			tb.Fatal(err)
		}
		page, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if callback == nil || callback.Query().Get("code") == "" || callback.Query().Get("state") != "st-1" {
		tb.Fatalf("Dex did not redirect back with a code: %d %s %v\n%s", resp.StatusCode, resp.Request.URL, callback, page)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {callback.Query().Get("code")}, "redirect_uri": {redirectURI},
		"code_verifier": {verifier}, "client_id": {c.ID}}
	req, _ := http.NewRequest(http.MethodPost, d.Issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.Secret != "" {
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	}
	tr, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer tr.Body.Close()
	body, _ := io.ReadAll(tr.Body)
	var t Token
	if err := json.Unmarshal(body, &t); err != nil {
		tb.Fatalf("Dex token endpoint: %d %s", tr.StatusCode, body)
	}
	t.Status = tr.StatusCode
	if t.Status != http.StatusOK {
		tb.Logf("Dex token endpoint: %d %s", tr.StatusCode, body)
	}
	return t
}
