package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/proxy"
)

// TestProxyOAuthRemoteSaysHow: lro-proxy runs no OAuth, so a remote that
// answers 401 fails New with how to pass a token (-header-env) and where
// the remote's authorization server is announced; a token it refuses is
// told apart from none (issue 42: the suite's 22 auth scenarios all end
// here).
func TestProxyOAuthRemoteSaysHow(t *testing.T) {
	const prm = "http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp"
	var gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+prm+`", scope="mcp"`)
		http.Error(w, "who are you", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)

	_, err := proxy.New(newOffloader(t, nil), proxy.Config{Remote: srv.URL + "/mcp"})
	require.Error(t, err)
	for _, want := range []string{
		"401 Unauthorized: it wants credentials",
		"which lro-proxy does not obtain itself",
		"its authorization server is named in " + prm,
		`LRO_REMOTE_AUTH="Bearer $TOKEN" lro-proxy -remote ` + srv.URL + "/mcp -header-env Authorization=LRO_REMOTE_AUTH",
		"docs/proxy.md",
	} {
		assert.Contains(t, err.Error(), want)
	}

	_, err = proxy.New(newOffloader(t, nil), proxy.Config{Remote: srv.URL + "/mcp", Headers: map[string]string{"authorization": "Bearer stale"}})
	require.Error(t, err)
	assert.Equal(t, "Bearer stale", gotAuth)
	assert.Contains(t, err.Error(), "answered HTTP 401 Unauthorized to the Authorization header sent: the token was refused")
	assert.Contains(t, err.Error(), "-header-env Authorization=LRO_REMOTE_AUTH")
}
