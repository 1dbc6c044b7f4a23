// Command client does, with the official Go SDK's client, what each of the
// conformance suite's client scenarios asks of a client, against the
// scenario server whose URL is its last argument (the suite appends it and
// names the scenario in MCP_CONFORMANCE_SCENARIO). TestConformanceClient
// runs it three ways and compares:
//
//	client URL                      the SDK's client connects to URL itself (OAuth included)
//	client -proxy LRO_PROXY URL     it speaks stdio to `lro-proxy -remote URL`
//	client -proxy LRO_PROXY -token URL
//	                                it gets a token by OAuth first, then runs the proxy
//	                                with -header-env Authorization=VARIABLE (docs/proxy.md)
//
// The client speaks protocol 2025-11-25, the scenarios' version, whichever
// way it connects: what the proxy negotiates upstream is the proxy's own.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// protocol is the version the client asks for on every path.
const protocol = "2025-11-25"

// tokenVariable is the environment variable the -token path hands the
// proxy its bearer token in.
const tokenVariable = "LRO_CONFORMANCE_AUTHORIZATION"

// redirectURL is where the scenarios' authorization server sends the code;
// nothing listens there: the client reads the code from the redirect.
const redirectURL = "http://localhost:3000/callback"

func main() {
	log.SetFlags(0)
	proxy := flag.String("proxy", "", "the lro-proxy binary to reach the scenario server through (stdio downstream, -remote upstream)")
	token := flag.Bool("token", false, "with -proxy: get a token by OAuth first and give it to the proxy with -header-env")
	budget := flag.Duration("timeout", 25*time.Second, "end the scenario, saying why, after this long (before the suite's own timeout, 30 s by default, stops the client)")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatalf("usage: client [-proxy LRO_PROXY [-token]] URL (got %d arguments)", flag.NArg())
	}
	remote := flag.Arg(0)
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if scenario == "" {
		log.Fatal("MCP_CONFORMANCE_SCENARIO is not set: the suite sets it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), *budget)
	defer cancel()
	c := &run{scenario: scenario, remote: remote, proxy: *proxy, token: *token}
	if err := json.Unmarshal([]byte(cmp.Or(os.Getenv("MCP_CONFORMANCE_CONTEXT"), "{}")), &c.context); err != nil {
		log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
	}
	if err := c.do(ctx); err != nil {
		log.Fatalf("scenario %s: %v", scenario, err)
	}
}

// run is one scenario's client.
type run struct {
	scenario, remote, proxy string
	token                   bool
	context                 struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
}

func (c *run) do(ctx context.Context) error {
	var opts mcp.ClientOptions
	tool, args := "", map[string]any{}
	switch sc := c.scenario; {
	case sc == "initialize":
	case sc == "tools_call":
		tool, args = "add_numbers", map[string]any{"a": 5, "b": 3}
	case sc == "elicitation-sep1034-client-defaults":
		// Accept with nothing filled in: the client is to apply the
		// schema's defaults.
		opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		}
		tool = "test_client_elicitation_defaults"
	case sc == "sse-retry":
		tool = "test_reconnection"
	case strings.HasPrefix(sc, "auth/"):
		tool = "test-tool"
	default:
		return fmt.Errorf("no client behaviour for this scenario: add it to testdata/client")
	}
	session, err := c.connect(ctx, &opts)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer session.Close()
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	if tool == "" {
		return nil
	}
	if !slices.ContainsFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == tool }) {
		return fmt.Errorf("the server lists no tool %q", tool)
	}
	if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args}); err != nil {
		return fmt.Errorf("tools/call %s: %w", tool, err)
	}
	return nil
}

// connect opens the session the flags ask for.
func (c *run) connect(ctx context.Context, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "lro-conformance-client", Version: "1.0.0"}, opts)
	var t mcp.Transport
	switch {
	case c.proxy == "":
		st := &mcp.StreamableClientTransport{Endpoint: c.remote}
		if strings.HasPrefix(c.scenario, "auth/") {
			h, err := c.oauth()
			if err != nil {
				return nil, err
			}
			st.OAuthHandler = h
		}
		t = st
	default:
		cmd := exec.Command(c.proxy, "-remote", c.remote)
		cmd.Stderr = os.Stderr // the suite keeps it in stderr.txt
		if c.token {
			bearer, err := c.getToken(ctx)
			if err != nil {
				return nil, fmt.Errorf("getting a token to give lro-proxy: %w", err)
			}
			cmd.Args = append(cmd.Args, "-header-env", "Authorization="+tokenVariable)
			cmd.Env = append(os.Environ(), tokenVariable+"=Bearer "+bearer)
		}
		t = &mcp.CommandTransport{Command: cmd}
	}
	return client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
}

// oauth is the SDK's authorization-code handler as the scenarios expect a
// client to register: a client ID metadata document where the server
// supports one, the pre-registered client the scenario gives, or dynamic
// registration.
func (c *run) oauth() (*auth.AuthorizationCodeHandler, error) {
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:                    redirectURL,
		AuthorizationCodeFetcher:       followRedirect,
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: "https://conformance-test.local/client-metadata.json"},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{redirectURL}},
		},
	}
	if c.context.ClientID != "" && c.context.ClientSecret != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{
			ClientID:         c.context.ClientID,
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: c.context.ClientSecret},
		}
	}
	return auth.NewAuthorizationCodeHandler(cfg)
}

// followRedirect plays the user: the scenarios' authorization server
// redirects at once to the redirect URL with the code and state.
func followRedirect(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return nil, fmt.Errorf("the authorization server answered %s without a redirect carrying a code (Location %q)", resp.Status, resp.Header.Get("Location"))
	}
	q := loc.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// getToken is the workaround docs/proxy.md describes, done by a program:
// an OAuth client outside the proxy answers the remote's 401 and hands the
// access token over.
func (c *run) getToken(ctx context.Context) (string, error) {
	h, err := c.oauth()
	if err != nil {
		return "", err
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"lro-conformance-token","version":"1.0.0"}}}`, protocol)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.remote, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusUnauthorized {
		resp.Body.Close()
		return "", fmt.Errorf("the remote answered %s, not 401 Unauthorized, to a request without a token", resp.Status)
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return "", err
	}
	ts, err := h.TokenSource(ctx)
	if err != nil {
		return "", err
	}
	if ts == nil {
		return "", errors.New("the OAuth flow ended without a token")
	}
	tok, err := ts.Token()
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}
