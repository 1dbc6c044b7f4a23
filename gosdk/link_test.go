package gosdk_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// A server on the official SDK that uses lro through this package, and
// nothing of mcp-go.
const officialServer = `package main

import (
	"context"
	"log"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	off, err := lro.New(lro.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer off.Close()
	s := mcp.NewServer(&mcp.Implementation{Name: "min", Version: "1.0.0"}, nil)
	gosdk.Install(s, off)
	gosdk.AddExtractTool(s, off)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
`

// What any program whose import graph holds mcp-go links of it: the
// packages' initialization, which Go runs for every imported package
// whether or not its code is used. The root package imports mcp-go for
// its adapter, so this much is the floor.
const importOnly = `package main

import (
	_ "github.com/mark3labs/mcp-go/mcp"
	_ "github.com/mark3labs/mcp-go/server"
)

func main() {}
`

// TestOfficialServerLinksNoMCPGo builds a minimal official-SDK server that
// uses lro through gosdk, and checks with go tool nm that it links no
// code of mcp-go: nothing beyond what merely importing mcp-go links (its
// packages' init). The mcp-go adapter's methods sit on lro.Offloader, and
// the linker keeps every exported method of a type that reaches an
// interface once reflect.Value.MethodByName is linked (text/template's executor
// calls it; lro's templates run on internal/tmpl, which does not): so
// nothing the engine holds or hands out may refer to the Offloader.
func TestOfficialServerLinksNoMCPGo(t *testing.T) {
	goTool, root := linkCheckTools(t)
	dir := t.TempDir()
	server := buildInModule(t, goTool, root, dir, "server", officialServer)
	floor := buildInModule(t, goTool, root, dir, "floor", importOnly)

	linked := mcpGoSymbols(t, goTool, server)
	allowed := make(map[string]bool)
	for _, s := range mcpGoSymbols(t, goTool, floor) {
		allowed[s] = true
	}
	var extra []string
	for _, s := range linked {
		if !allowed[s] {
			extra = append(extra, s)
		}
	}
	if n := len(extra); n > 0 {
		if n > 20 {
			extra = append(extra[:20], "...")
		}
		t.Errorf("the official-SDK server links %d symbols of mcp-go beyond its package init, among them:\n%s",
			n, strings.Join(extra, "\n"))
	}
	if fi, err := os.Stat(server); err == nil {
		t.Logf("official-SDK server with lro: %d bytes; mcp-go symbols: %d (import floor: %d)", fi.Size(), len(linked), len(allowed))
	}
}

// buildInModule builds the program src as a package of the module at
// root, without writing into it (a build overlay), and returns the
// binary's path in dir.
func buildInModule(t *testing.T, goTool, root, dir, name, src string) string {
	t.Helper()
	file := filepath.Join(dir, name+".go")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	virtual := filepath.Join(root, "internal", "linkcheck_"+name, "main.go")
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{virtual: file}})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(dir, name+".overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name+".bin")
	cmd := exec.Command(goTool, "build", "-overlay", overlayFile, "-o", bin, "./internal/linkcheck_"+name)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return bin
}

// mcpGoSymbols returns the names of the symbols of mcp-go in the binary.
func mcpGoSymbols(t *testing.T, goTool, bin string) []string {
	t.Helper()
	out, err := exec.Command(goTool, "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm %s: %v", bin, err)
	}
	var syms []string
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		name := strings.Join(f[2:], " ")
		if strings.Contains(name, "github.com/mark3labs/mcp-go") {
			syms = append(syms, name)
		}
	}
	sort.Strings(syms)
	return syms
}
