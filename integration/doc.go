// Package integration holds the tests of helm that drive programs from
// outside Go: the web UI in a real, headless Chromium (chromedp), helm
// mcp under the MCP Inspector, a client helm did not write, and the
// JetStream store (store/natsstore) against nats-server, embedded in the
// test process on loopback ports (one server, and a cluster of three),
// and the helm program against a server that requires TLS and a client
// certificate and one in operator (JWT) mode, with throwaway keys. It
// is a module of its own so that the browser driver, the NATS server and
// the gitleaks scanner never enter the module graph of the library; go get
// of helm does not pull them.
//
// HELM_STORE_BENCH=1 go test -v -run TestStoreThroughput prints the
// stores' durable units per second (jetstream_bench_test.go says what is
// measured).
//
// The browser tests skip when no chromium (or chromium-browser,
// google-chrome) is on PATH, and fail then when HELM_BROWSER_TESTS=1, as
// CI sets it. HELM_CHROMIUM names the browser to use; HELM_SCREENSHOTS a
// directory for the screenshots of each page (a temporary one otherwise).
//
// TestRedactHidesWhatGitleaksFinds is the differential test of package
// redact: it uses gitleaks (its default rules and detector, as a library)
// to find secrets in samples generated from each of its rules, and
// requires helm's redactor to hide every one. gitleaks is a reference
// here, never a dependency of helm. HELM_REDACT_SAMPLES (samples a rule,
// 20 by default) and HELM_REDACT_SEED widen its search.
//
// TestInstallOfTaggedCLIWorksOffline plays the release steps of
// CONTRIBUTING.md on a module proxy that is a directory, then runs go
// install github.com/helmlog/helm/cmd/helm@v0.1.0 outside the workspace,
// with no network: the CLI's module installs as users will install it.
//
// The Inspector test runs when HELM_MCP_INSPECTOR names the Inspector's
// program (npm install --prefix DIR @modelcontextprotocol/inspector@2.12.0
// makes DIR/node_modules/.bin/mcp-inspector; .ci/run does, and sets it),
// and is skipped, saying so, when it is not set. The subscription test
// uses mcpdo, the Inspector's connection CLI beside it, with a daemon
// private to the test (stopped at its end).
package integration
