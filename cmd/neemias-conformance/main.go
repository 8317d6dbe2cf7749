// Command neemias-conformance serves the MCP conformance fixtures (internal/mcp/conformance)
// through the Neemias protocol runtime, on loopback, for the official conformance suite and
// the client tests. It requires a bearer token (the suite reaches it through a loopback proxy
// that injects one) and prints one line, MCP_URL=<endpoint>, once it is listening.
//
//	neemias-conformance [-addr 127.0.0.1:0] [-token T] [-registry fixtures|neemias]
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

	"github.com/neemias/neemias-mcp/internal/mcp/conformance"
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
	registry := flag.String("registry", "fixtures", `what to serve: "fixtures" (the suite's fixtures) or "neemias" (the generated registry, in-memory demo handler)`)
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

	newServer := conformance.NewServer
	switch *registry {
	case "fixtures":
	case "neemias":
		newServer = conformance.NewNeemiasServer
	default:
		return fmt.Errorf("unknown -registry %q", *registry)
	}
	h, err := newServer(base, *token, logger)
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
