package gosdk_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// methodByNameLinked returns the line of go tool nm that shows the binary
// links reflect.Value.MethodByName, "" when it does not. Once a program
// can call it (text/template's executor does), the linker keeps every
// exported method of every type reachable through an interface, in the
// whole program: 3.0 MiB of a 19.4 MB server (issue 33). lro's templates
// run on internal/tmpl, which calls no method of its data.
func methodByNameLinked(t *testing.T, goTool, bin string) string {
	t.Helper()
	out, err := exec.Command(goTool, "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm %s: %v", bin, err)
	}
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) >= 3 && f[len(f)-1] == "reflect.Value.MethodByName" {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// linkCheckTools returns the go tool and the module's root for a test that
// builds programs, or skips the test with -short or without the go tool.
func linkCheckTools(t *testing.T) (goTool, root string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds programs; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	if root, err = filepath.Abs(".."); err != nil {
		t.Fatal(err)
	}
	return goTool, root
}
