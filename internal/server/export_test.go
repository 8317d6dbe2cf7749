package server

// ClientMetadataFetcher lets the external tests build the production metadata-document fetcher
// with test-only cimd options (loopback allowed, the test server's CA).
var ClientMetadataFetcher = clientMetadataFetcher

// ReconcileUpstreams lets the tests check the runtime upstream configuration against a spec.
var ReconcileUpstreams = reconcileUpstreams
