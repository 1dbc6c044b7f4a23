package lro_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeSnippetsCompile compiles every Go snippet of README.md and of
// the documents in docs/ against the package as it is: what a newcomer
// copies must build. Each snippet becomes the body of a function of its
// own, after declarations of the names it takes from the reader's server
// (its tools, handlers, context), in a throwaway package of this module;
// go vet builds them all.
func TestReadmeSnippetsCompile(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	dir, err := os.MkdirTemp(".", "readme-snippets-") // inside the module, for its imports
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	n := 0
	for _, doc := range append([]string{"README.md"}, docs...) {
		text, err := os.ReadFile(doc)
		require.NoError(t, err)
		blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(text), -1)
		if doc == "README.md" {
			require.GreaterOrEqual(t, len(blocks), 4, "README's snippets: the wiring on both SDKs, lro_extract, a test")
		}
		for _, b := range blocks {
			src, ok := snippetFile(n, b[1])
			n++
			if !ok {
				continue // an import line: the others show its use
			}
			src = "// From " + doc + ".\n\n" + src
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("snippet%02d.go", n)), []byte(src), 0o600))
		}
	}
	require.GreaterOrEqual(t, n, 10, "the snippets of README and docs/")
	out, err := exec.Command("go", "vet", "./"+dir).CombinedOutput()
	require.NoError(t, err, "a snippet of README or docs/ does not build (its file says which document):\n%s", out)
}

// snippetStubs declare, in the function a snippet becomes, what it takes
// from the reader's program: the first of each pair for an mcp-go server,
// the second for one on the official SDK.
var snippetStubs = map[string][2]string{
	"recallTool":  {"mcp.Tool", "*mcp.Tool"},
	"listTool":    {"mcp.Tool", ""},
	"getLogsTool": {"mcp.Tool", "*mcp.Tool"},
	"tool":        {"mcp.Tool", ""},
	"recall":      {"server.ToolHandlerFunc", "func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error)"},
	"list":        {"server.ToolHandlerFunc", ""},
	"getLogs":     {"server.ToolHandlerFunc", "func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error)"},
	"handler":     {"server.ToolHandlerFunc", ""},
	"taskHandler": {"server.TaskToolHandlerFunc", ""},
	"ctx":         {"context.Context", ""},
	"memories":    {"[]json.RawMessage", ""},
	"scores":      {"[]float64", ""},
	"budget":      {"int", ""},
	"format":      {"func([]json.RawMessage, int) string", ""},
	"cursor":      {"any", ""},
	"rowsOf":      {"func(any) iter.Seq2[json.RawMessage, error]", ""},
	"render":      {"func([]json.RawMessage) *mcp.CallToolResult", ""},
	"page":        {"map[string]any", ""},
	"section":     {"[]byte", ""},
	"toml":        {"struct{ Unmarshal func([]byte, any) error }", ""},
	"metrics":     {"struct{ Observe func(int64, time.Duration) }", ""},
	"alert":       {"func(error)", ""},
	"cfg":         {"lro.Config", ""},
	"s":           {"*server.MCPServer", ""},
	"off":         {"*lro.Offloader", ""},
}

var (
	declaredRE = regexp.MustCompile(`(?m)^\s*([\w, ]+?)\s*:=`)
	wordRE     = regexp.MustCompile(`\b[A-Za-z_]\w*\b`)
	commentRE  = regexp.MustCompile(`(?m)(^|\s)//.*$`)
)

// snippetFile returns the Go file that a README snippet becomes, and false
// for one that is not statements.
func snippetFile(i int, snippet string) (string, bool) {
	if strings.HasPrefix(strings.TrimSpace(snippet), "import") {
		return "", false
	}
	official := strings.Contains(snippet, "gosdk.")
	// The handler of AddTaskTool is a task handler.
	snippet = strings.ReplaceAll(snippet, "TaskHandler(off, handler)", "TaskHandler(off, taskHandler)")
	declared := map[string]bool{}
	for _, m := range declaredRE.FindAllStringSubmatch(snippet, -1) {
		for _, name := range strings.Split(m[1], ",") {
			if name = strings.TrimSpace(name); name != "_" {
				declared[name] = true
			}
		}
	}
	used := map[string]bool{}
	code := commentRE.ReplaceAllString(snippet, "")
	for _, w := range wordRE.FindAllString(code, -1) {
		used[w] = true
	}
	var stubs []string
	for name, types := range snippetStubs {
		typ := types[0]
		if official && types[1] != "" {
			typ = types[1]
		}
		if used[name] && !declared[name] && !strings.Contains(snippet, "func("+name) {
			stubs = append(stubs, fmt.Sprintf("\tvar %s %s\n", name, typ))
		}
	}
	var b strings.Builder
	b.WriteString("package snippets\n\nimport (\n")
	imports := []string{"context", "encoding/json", "iter", "log", "log/slog", "syscall", "time",
		"github.com/mcplro/lro", "github.com/mcplro/lro/lrotest", "github.com/mcplro/lro/gosdk"}
	if official {
		imports = append(imports, "github.com/modelcontextprotocol/go-sdk/mcp")
	} else {
		imports = append(imports, "github.com/mark3labs/mcp-go/mcp", "github.com/mark3labs/mcp-go/server", "github.com/mcplro/lro/mcpgo")
	}
	for _, imp := range imports {
		fmt.Fprintf(&b, "\t%q\n", imp)
	}
	b.WriteString(")\n\n")
	// Every import used, whatever the snippet uses.
	b.WriteString(fmt.Sprintf("var _ = []any{context.Background, json.Marshal, iter.Pull[int], log.Print, slog.Default, syscall.ENOSPC, time.Second, lro.New, lrotest.NewMemFS, gosdk.Install, mcp.%s}\n\n",
		map[bool]string{false: "NewToolResultText", true: "NewServer"}[official]))
	if !official {
		b.WriteString("var _, _ = server.NewMCPServer, mcpgo.ServerOption\n\n")
	}
	returns := regexp.MustCompile(`(?m)^return `).MatchString(snippet) // at the snippet's own level
	if returns {
		fmt.Fprintf(&b, "func snippet%d() (*mcp.CallToolResult, error) {\n", i+1)
	} else {
		fmt.Fprintf(&b, "func snippet%d() {\n", i+1)
	}
	for _, s := range stubs {
		b.WriteString(s)
	}
	b.WriteString(snippet)
	if !returns {
		for name := range declared {
			fmt.Fprintf(&b, "\t_ = %s\n", name)
		}
	}
	b.WriteString("}\n")
	return b.String(), true
}
