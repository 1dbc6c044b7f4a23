package proxy_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestRootLinksNoClient: a server that imports lro, and not this package,
// links neither mcp-go's client nor its transports, which only the proxy
// uses.
func TestRootLinksNoClient(t *testing.T) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(gocmd, "list", "-deps", "./testdata/serveronly").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/mcplro/lro") {
		t.Fatalf("the program does not import lro: %s", out)
	}
	for _, d := range deps {
		if d == "github.com/mark3labs/mcp-go/client" || strings.HasPrefix(d, "github.com/mark3labs/mcp-go/client/") || d == "github.com/mcplro/lro/proxy" {
			t.Errorf("a program that imports only lro links %s", d)
		}
	}
}
