package lrotest_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHelpersLinkOneSDK: the tests of a server on one SDK compile none of
// the other. lrotest itself imports no SDK and nothing of lro (lro's own
// tests use it; its examples do), mcpgotest no official SDK, gosdktest no
// mcp-go, their tests included (go list -test -deps).
func TestHelpersLinkOneSDK(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	for _, c := range []struct {
		args   []string
		banned []string
	}{
		{[]string{"."}, []string{"github.com/mark3labs/", "github.com/modelcontextprotocol/", "github.com/mcplro/lro\n"}},
		{[]string{"-test", "./mcpgotest"}, []string{"github.com/modelcontextprotocol/"}},
		{[]string{"-test", "./gosdktest"}, []string{"github.com/mark3labs/"}},
	} {
		out, err := exec.Command(goTool, append([]string{"list", "-deps"}, c.args...)...).Output()
		if err != nil {
			t.Fatalf("go list %v: %v", c.args, err)
		}
		for _, b := range c.banned {
			if strings.Contains(string(out), b) {
				t.Errorf("go list -deps %v: imports %s", c.args, strings.TrimSpace(b))
			}
		}
		if !strings.Contains(string(out), "github.com/mcplro/lro/lrotest") {
			t.Errorf("go list -deps %v listed nothing of lrotest: %.300s", c.args, out)
		}
	}
}
