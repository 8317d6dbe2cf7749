// Command neemias-conformance serves the MCP conformance fixtures (internal/mcp/conformance)
// through the Neemias protocol runtime, on loopback, for the official conformance suite and
// the client tests. It requires a bearer token (the suite reaches it through a loopback proxy
// that injects one) and prints one line, MCP_URL=<endpoint>, once it is listening.
//
//	neemias-conformance [-addr 127.0.0.1:0] [-token T]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/authn/authntest"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/httpx"
	"github.com/neemias/neemias-mcp/internal/mcp"
	"github.com/neemias/neemias-mcp/internal/mcp/conformance"
	"github.com/neemias/neemias-mcp/internal/principal"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "neemias-conformance:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	token := flag.String("token", "conformance-token", "the bearer token the server accepts")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *addr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return fmt.Errorf("refusing to serve fixtures on non-loopback address %s", ln.Addr())
	}
	base := "http://" + ln.Addr().String()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	h, err := NewServer(base, *token, logger)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("MCP_URL=%s/mcp\n", base)
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serving: %w", err)
		}
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// NewServer returns the fixture server's mux for a server reachable at base: /mcp, its /sse
// alias and the RFC 9728 metadata documents.
func NewServer(base, token string, logger *slog.Logger) (http.Handler, error) {
	opts := conformance.Options()
	opts.Verifier = authntest.Static{Tokens: map[string]principal.Principal{token: {
		UserID: uuid.MustParse("00000000-0000-4000-8000-000000000001"), ChurchID: uuid.MustParse("00000000-0000-4000-8000-000000000002"),
		Role: "ADMIN", Scopes: capability.NewScopeSet(conformance.Scope), ClientID: "conformance",
	}}}
	opts.ResourceMetadataURL = base + "/.well-known/oauth-protected-resource/mcp"
	opts.AllowedHosts = httpx.LoopbackHosts()
	opts.AllowedOrigins = httpx.LoopbackOrigins()
	opts.Logger = logger
	h, err := mcp.NewHandler(opts)
	if err != nil {
		return nil, fmt.Errorf("building handler: %w", err)
	}
	prm := fmt.Sprintf(`{"resource":%q,"authorization_servers":[%q],"scopes_supported":[%q],"bearer_methods_supported":["header"]}`,
		base+"/mcp", base, conformance.Scope)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/sse", h)
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(prm))
		})
	}
	return mux, nil
}
