package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/proxy"
)

// elsewhere is a server of another origin that records what reaches it.
type elsewhere struct {
	*httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func startElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.seen = append(e.seen, r.Header.Clone())
		e.mu.Unlock()
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *elsewhere) requests() []http.Header {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen
}

// TestProxyNoCrossOriginRedirect: a remote that redirects to another
// origin (another host, port or scheme) is not followed there, neither
// at the start nor for a call: the configured headers, the session and
// the call never leave the configured origin, and the error names the
// redirect.
func TestProxyNoCrossOriginRedirect(t *testing.T) {
	secret := map[string]string{"X-Api-Key": "s3cret", "Authorization": "Bearer t0ken"}
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
		t.Run("start "+http.StatusText(status), func(t *testing.T) {
			evil := startElsewhere(t)
			redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, evil.URL+"/mcp", status)
			}))
			defer redirecting.Close()
			_, err := proxy.New(newOffloader(t, nil), proxy.Config{Remote: redirecting.URL + "/mcp", Headers: secret})
			require.Error(t, err)
			t.Log(err)
			assert.Contains(t, err.Error(), "redirect")
			assert.Contains(t, err.Error(), evil.URL)
			assert.Empty(t, evil.requests(), "nothing reached the other origin")
		})
	}

	t.Run("call", func(t *testing.T) {
		evil := startElsewhere(t)
		h := startHostile(t, map[string]http.HandlerFunc{
			"leak": func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, evil.URL+"/mcp", http.StatusTemporaryRedirect)
			},
		})
		p, _ := startProxy(t, h.http.URL, proxy.Config{Headers: secret})
		c := connect(t, p.Server())
		res := callTool(t, c, "leak", nil)
		require.True(t, res.IsError)
		msg := res.Content[0].(mcp.TextContent).Text
		t.Log(msg)
		assert.Contains(t, msg, "redirect")
		assert.Contains(t, msg, evil.URL)
		assert.False(t, strings.Contains(msg, "s3cret"))
		assert.Empty(t, evil.requests(), "nothing reached the other origin")
	})

	t.Run("same origin is followed", func(t *testing.T) {
		h := startHostile(t, nil)
		mux := http.NewServeMux()
		mux.Handle("/mcp", h.http.Config.Handler)
		mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
		})
		srv := httptest.NewServer(mux)
		defer srv.Close()
		p, err := proxy.New(newOffloader(t, nil), proxy.Config{Remote: srv.URL + "/old", Headers: secret})
		require.NoError(t, err)
		// Closed before srv, whose Close waits for every request: the
		// proxy's subscription, once open, lasts until the proxy ends.
		p.Close()
	})
}
