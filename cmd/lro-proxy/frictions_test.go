package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProxyHelpNamesEveryVariable: `lro-proxy -h` names every offload
// variable README's configuration table lists, and no other.
func TestProxyHelpNamesEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	vars := regexp.MustCompile("`(ATLATL_PROMPT__OFFLOAD__[A-Z_]+)` \\|")
	var documented []string
	for _, m := range vars.FindAllStringSubmatch(string(readme), -1) {
		documented = append(documented, m[1])
	}
	require.Len(t, documented, 8, "README's configuration table")
	out, _ := exec.Command(proxyBin, "-h").CombinedOutput()
	var helped []string
	for _, m := range regexp.MustCompile(`(ATLATL_PROMPT__OFFLOAD__[A-Z_]+)\s+default `).FindAllStringSubmatch(string(out), -1) {
		helped = append(helped, m[1])
	}
	slices.Sort(documented)
	slices.Sort(helped)
	assert.Equal(t, documented, helped, "%s", out)
}

// TestProxyMalformedVariableReachesClient: a malformed offload variable
// is the answer to the client's first request, naming the variable, on
// either protocol generation; then the proxy exits with status 1.
func TestProxyMalformedVariableReachesClient(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run(fmt.Sprintf("client=%q", version), func(t *testing.T) {
			cmd := exec.Command(proxyBin, "--", serverBin)
			cmd.Env = append(os.Environ(), "ATLATL_PROMPT__OFFLOAD__DELIVERY=bogus")
			var opts *mcp.ClientSessionOptions
			if version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, opts)
			if err == nil {
				// A client of 2026-07-28 may start without a request.
				_, err = cs.ListTools(ctx, nil)
				cs.Close()
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), `ATLATL_PROMPT__OFFLOAD__DELIVERY "bogus"`)
		})
	}
}
