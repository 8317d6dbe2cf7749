package httpx

import "context"

type metadataURLKey struct{}

// WithResourceMetadataURL names the RFC 9728 protected-resource metadata of the endpoint a
// request addressed (an alias such as /sse, or another loopback host name), for the
// challenges answered to it; without one, the transports' configured URL is used.
func WithResourceMetadataURL(ctx context.Context, u string) context.Context {
	return context.WithValue(ctx, metadataURLKey{}, u)
}

// ResourceMetadataURL is the metadata URL of the request's endpoint, or fallback.
func ResourceMetadataURL(ctx context.Context, fallback string) string {
	if u, ok := ctx.Value(metadataURLKey{}).(string); ok && u != "" {
		return u
	}
	return fallback
}
