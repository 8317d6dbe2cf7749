package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/internal/devdb"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
)

// InspectorNode is the Node.js the MCP Inspector needs (on Node 20, npx picks an old
// Inspector that crashes).
const InspectorNode = "22.19"

// printInstructions tells a person how to connect a client to the demo. Every command it
// prints works pasted as it is, in another terminal, on the machine the server runs on: the
// binary is this one (its absolute path), with the flags this server was started with
// (--public-url, and --database-url unless the database is the default one). The Claude
// Desktop snippet keeps every argument free of spaces (Claude Desktop on Windows splits
// arguments at spaces; mcp-remote's README recommends Authorization:${AUTH_HEADER}).
func printInstructions(cmd *cobra.Command, srv *server.Server, d *devdb.DB) error {
	return writeBanner(cmd.OutOrStdout(), srv, d)
}

func writeBanner(out io.Writer, srv *server.Server, d *devdb.DB) error {
	base := strings.TrimSuffix(srv.ResourceURL, "/mcp")
	self := selfCommand()
	if srv.External != nil {
		fmt.Fprintf(out, "\nNeemias MCP is running in external provider mode (database: %s).\n\n", d.Source)
		fmt.Fprintf(out, "  MCP endpoint:  %s\n", srv.ResourceURL)
		fmt.Fprintf(out, "  REST API:      %s\n", base+"/api/v1")
		fmt.Fprintf(out, "  Metadata:      %s\n", base+"/.well-known/oauth-protected-resource/mcp")
		fmt.Fprintf(out, "  OAuth server:  %s (the external provider; tokens come only from it)\n\n", srv.AuthorizationServer)
		// The provider's issuer (not AuthorizationServer, which is this origin with
		// --oauth-metadata-proxy), trusted explicitly: this shell may lack $NEEMIAS_OAUTH_ISSUER.
		iss := srv.External.Issuer()
		fmt.Fprintf(out, "Link each provider account to a demo user before it can call the server (the log names the <sub> of a refused account):\n  %s identity link%s --issuer %s --trusted-issuer %s --subject <sub> --email %s\n",
			self, databaseFlag(d), iss, iss, seed.DemoVoluntarioEmail)
		return nil
	}
	admin, err := mintFor(srv, demoUsers[0], 12*time.Hour)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nNeemias MCP is running (database: %s).\n\n", d.Source)
	fmt.Fprintf(out, "  MCP endpoint:  %s (also %s/sse)\n", srv.ResourceURL, base)
	fmt.Fprintf(out, "  REST API:      %s\n", base+"/api/v1")
	fmt.Fprintf(out, "  Metadata:      %s\n", base+"/.well-known/oauth-protected-resource/mcp")
	fmt.Fprintf(out, "  OAuth server:  %s (clients log in with the demo users below)\n\n", base+"/.well-known/oauth-authorization-server")
	fmt.Fprintf(out, "Demo logins (password %q), with a 12-hour access token each:\n", seed.DemoPassword)
	tw := tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
	for _, u := range demoUsers {
		tok, err := mintFor(srv, u, 12*time.Hour)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", u.role, u.email, tok)
	}
	tw.Flush()

	remote := []string{"-y", "mcp-remote", srv.ResourceURL}
	if u, err := url.Parse(base); err == nil && u.Scheme == "http" && !isLoopback(u.Hostname()) {
		remote = append(remote, "--allow-http") // mcp-remote refuses plain http elsewhere
	}
	oauthCfg := claudeConfig(remote, nil)
	bearerCfg := claudeConfig(append(remote, "--header", "Authorization:${AUTH_HEADER}"), map[string]string{"AUTH_HEADER": "Bearer " + admin})
	fmt.Fprintf(out, `
Claude Desktop (claude_desktop_config.json), through mcp-remote (needs Node.js and npx):
  with OAuth (log in as a demo user in the browser that opens):
    %s
  with the ADMIN token above:
    %s

MCP Inspector CLI (needs Node.js %s or newer):
  npx -y @modelcontextprotocol/inspector --cli %s --transport http --method tools/list --header "Authorization: Bearer %s"

More tokens:
  %s token%s --public-url %s --email %s --scopes roster:read,checkins:read
`, oauthCfg, bearerCfg, InspectorNode, srv.ResourceURL, admin, self, databaseFlag(d), base, seed.DemoVoluntarioEmail)
	return nil
}

// claudeConfig is one claude_desktop_config.json, on one line.
func claudeConfig(args []string, env map[string]string) string {
	entry := map[string]any{"command": "npx", "args": args}
	if env != nil {
		entry["env"] = env
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"neemias": entry}})
	return string(b)
}

// selfCommand is this binary's absolute path, quoted when it needs to be.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "neemias-mcp"
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	return shellQuote(exe)
}

// databaseFlag is " --database-url URL" unless the database is the default one (the local
// PostgreSQL the command finds by itself). A URL with a password is not printed: the
// command then reads $DATABASE_URL, as serve did.
func databaseFlag(d *devdb.DB) string {
	if d.Source == "local" {
		return ""
	}
	if u, err := url.Parse(d.URL); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			return ` --database-url "$DATABASE_URL"`
		}
	}
	return " --database-url " + shellQuote(d.URL)
}

// shellQuote double-quotes s when it holds anything but letters, digits and / . _ - : @ ,
// = + (double quotes work in POSIX shells, cmd.exe and PowerShell alike).
func shellQuote(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-:@,=+", r)) {
			return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
		}
	}
	return s
}

func isLoopback(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}
