package lro

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro/internal/jqsandbox"
	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/oklog/ulid/v2"
)

// ExtractToolName is the name of the native extraction tool.
const ExtractToolName = "lro_extract"

// GenericSchemaVersion is the schema_version of the header of a file whose
// records are not MIF memories; lro_extract then infers its recipes from
// the records, as the descriptor did.
const GenericSchemaVersion = "generic"

// AddExtractTool registers the lro_extract tool on s: the model queries an
// offloaded file with jq through MCP, without a shell. From then on the
// descriptors' guidance points to lro_extract (the specification's native
// guidance); jq_recipes stay for clients with a shell.
//
// The tool reads only files this Offloader wrote, runs queries in process
// with gojq under time, memory, input and output bounds, and caps its own
// results at the threshold instead of offloading them.
func (o *Offloader) AddExtractTool(s *server.MCPServer) {
	def := o.ExtractToolDefinition()
	tool := mcp.NewToolWithRawSchema(def.Name, def.Description, def.InputSchema)
	tool.Annotations = mcp.ToolAnnotation{
		Title:           "Query an offloaded result",
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	}
	s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := o.Extract(ctx, req.GetArguments())
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(text), nil
	})
	o.native.Store(true)
}

// A ToolDefinition is what a host adapter needs to register a tool of this
// package: the same name, description and input schema on every host.
type ToolDefinition struct {
	Name        string
	Description string
	InputSchema json.RawMessage // a JSON Schema of type object
}

// ExtractToolDefinition returns the definition of lro_extract, whose calls
// [Offloader.Extract] answers. The tool only reads: hosts should annotate
// it read-only, non-destructive, idempotent and closed-world.
func (o *Offloader) ExtractToolDefinition() ToolDefinition {
	return ToolDefinition{
		Name: ExtractToolName,
		Description: "Query a result set that was offloaded to a JSONL file, with a standard recipe (1-10, see the descriptor's jq_recipes) or a jq filter. " +
			"Give exactly one of recipe and query. Results are capped; narrow the query to see more. " +
			"Offloaded files are deleted " + o.cfg.TTL().String() + " after they are written; then call the original tool again.",
		InputSchema: slices.Clone(extractInputSchema),
	}
}

var extractInputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"file_path":{"type":"string","description":"The file_path of the offload descriptor."},` +
	`"recipe":{"type":"number","description":"A standard recipe number, 1-10."},` +
	`"query":{"type":"string","description":"A jq filter run on each record, e.g. select(.namespace | startswith(\"_semantic\")). Parameters are bound as $name."},` +
	`"params":{"type":"object","description":"Recipe parameters, e.g. {\"namespace\": \"_semantic\"}, {\"keyword\": \"cache\"}, {\"tag\": \"security\"}, {\"type\": \"episodic\"}; for a query, each becomes a $variable."},` +
	`"slurp":{"type":"boolean","description":"Run the query once over an array of all records (like jq -s), for group_by, sort_by, length. Recipes know their own mode."}` +
	`},"required":["file_path"]}`)

// ExtractLimits bounds one lro_extract query. Zero fields take their
// defaults.
type ExtractLimits struct {
	Timeout       time.Duration // wall-clock time of a query; default 10s
	MaxQueryBytes int           // length of the query text; default 4096
	MaxFileBytes  int64         // size of the file read; default 256 MiB
	MaxHeapBytes  uint64        // heap growth while a query runs; default 512 MiB
	// CacheBytes is how many bytes of files are kept decoded between
	// queries; default DefaultExtractCacheBytes, negative disables.
	CacheBytes int64
}

func (l ExtractLimits) sandbox() jqsandbox.Limits {
	if l.Timeout <= 0 {
		l.Timeout = 10 * time.Second
	}
	return jqsandbox.Limits{Timeout: l.Timeout, MaxQueryBytes: l.MaxQueryBytes, MaxInputBytes: l.MaxFileBytes, MaxHeapBytes: l.MaxHeapBytes}
}

// Extract answers one lro_extract call, given its arguments decoded from
// JSON: file_path, and recipe (with params) or query (with params and
// slurp). It returns the results as text, at most the threshold's worth,
// or an error whose message is for the model: what was wrong with the
// call, or why the file or the query was refused or stopped.
func (o *Offloader) Extract(ctx context.Context, args map[string]any) (string, error) {
	fail := func(format string, a ...any) (string, error) {
		return "", errors.New(ExtractToolName + ": " + fmt.Sprintf(format, a...))
	}
	path, _ := args["file_path"].(string)
	if path == "" {
		return fail("file_path is required: pass the file_path of an offload descriptor")
	}
	recipeArg, hasRecipe := args["recipe"]
	hasRecipe = hasRecipe && recipeArg != nil
	query, _ := args["query"].(string)
	if q, present := args["query"]; present && q != nil && query == "" {
		return fail("query must be a non-empty string holding a jq filter")
	}
	if hasRecipe == (query != "") {
		return fail("give exactly one of recipe (a number) and query (a jq filter)")
	}
	params := map[string]any{}
	if p, present := args["params"]; present && p != nil {
		m, ok := p.(map[string]any)
		if !ok {
			return fail("params must be an object such as {\"namespace\": \"_semantic\"}")
		}
		params = m
	}
	slurp, _ := args["slurp"].(bool)

	name, err := o.ownFile(path)
	if err != nil {
		return fail("%v", err)
	}
	f, err := o.opts.fs.Open(name)
	if err != nil {
		o.records.forget(name)
		return fail("%v", o.openError(path, name, err))
	}
	defer f.Close()
	lim := o.opts.extractLimits.sandbox()
	fi, err := f.Stat()
	if err != nil {
		return fail("cannot read %s: %v", path, err)
	}
	size := fi.Size()
	if lim.MaxInputBytes > 0 && size > lim.MaxInputBytes {
		return fail("%s is %d bytes, more than the %d this tool reads", path, size, lim.MaxInputBytes)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	h, err := readHeader(r)
	if err != nil {
		return fail("%s: %v", path, err)
	}

	var (
		filter string
		mode   = jqsandbox.Stream
		raw    bool
		names  []string
		values []any
	)
	if hasRecipe {
		recipes, err := o.recipesOf(name, h)
		if err != nil {
			return fail("%v", err)
		}
		n, ok := recipeNumber(recipeArg, len(recipes))
		if !ok {
			return fail("recipe must be a whole number from 1 to %d, got %s", len(recipes), jsonText(recipeArg))
		}
		rec := recipes[n-1]
		filter, raw = rec.Filter, rec.Raw
		if rec.Slurp {
			mode = jqsandbox.Slurp
		}
		for k := range params {
			if !slices.ContainsFunc(rec.Params, func(p RecipeParam) bool { return p.Name == k }) {
				return fail("recipe %d takes %s; it has no parameter %q", n, paramList(rec.Params), k)
			}
		}
		for _, p := range rec.Params {
			names = append(names, p.Name)
			v, ok := params[p.Name]
			if !ok {
				v = p.Default
			}
			if err := checkRecipeParam(p.Name, v); err != nil {
				return fail("recipe %d: %v", n, err)
			}
			values = append(values, v)
		}
	} else {
		filter = query
		if slurp {
			mode = jqsandbox.Slurp
		}
		for k := range params {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if !isIdent(k) {
				return fail("parameter name %q cannot be a jq variable: use letters, digits and _", k)
			}
			values = append(values, params[k])
		}
	}

	var q *jqsandbox.Query
	if hasRecipe {
		q, err = o.queries.compile(filter, names)
	} else {
		q, err = jqsandbox.Compile(filter, names, lim)
	}
	if err != nil {
		return fail("invalid query: %v", trimPrefix(err))
	}
	if mode == jqsandbox.Stream {
		// Only a threshold's worth is shown: encode little more than that,
		// and count the rest. (A slurped result is often one large array,
		// shown in part, so it keeps the default bound.)
		lim.MaxOutputBytes = max(64<<10, 16*o.cfg.ThresholdTokens)
	}
	var res jqsandbox.Result
	records, cached := o.records.get(name, size)
	if !cached && o.records.fits(size) {
		if records, err = jqsandbox.DecodeRecords(r, lim); err != nil {
			return fail("reading %s: %v", path, trimPrefix(err))
		}
		o.records.put(name, size, records)
		cached = true
	}
	if cached {
		res, err = q.RunRecords(ctx, records, mode, values, lim)
	} else {
		res, err = q.Run(ctx, r, mode, values, lim)
	}
	if err != nil {
		return fail("%s", runError(err, lim.Timeout))
	}
	return o.formatResults(res, raw), nil
}

// recipeNumber reads a recipe number from 1 to max, given as a JSON number
// (or, leniently, a string of digits).
func recipeNumber(v any, max int) (int, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false
		}
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return 0, false
		}
		f = float64(n)
	default:
		return 0, false
	}
	// Compare as floats: converting 1e19 to int first would overflow.
	if f != math.Trunc(f) || f < 1 || f > float64(max) {
		return 0, false
	}
	return int(f), true
}

// ownFile checks that path names a file this Offloader wrote and returns
// its name in the FS. Nothing is read before this check passes.
func (o *Offloader) ownFile(path string) (string, error) {
	clean := filepath.Clean(path)
	if !filepath.IsAbs(clean) {
		return "", fmt.Errorf("file_path %q must be the absolute path of an offload descriptor", path)
	}
	name := filepath.Base(clean)
	if o.opts.fs.Path(name) != clean {
		return "", fmt.Errorf("file_path %q is not in the offload directory %s", path, filepath.Dir(o.opts.fs.Path(name)))
	}
	_, id, temp, ok := parseFileName(o.cfg.FilePrefix, name)
	if !ok || temp {
		return "", fmt.Errorf("file_path %q is not an offloaded file (%s-{operation}-{ULID}.jsonl)", path, o.cfg.FilePrefix)
	}
	if !o.owns(id) {
		return "", fmt.Errorf("file_path %q was offloaded by another server sharing the directory, not by %s (see lro.WithName)", path, o.Name())
	}
	return name, nil
}

func (o *Offloader) openError(path, name string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot read %s: %v", path, trimPrefix(err))
	}
	_, id, _, _ := parseFileName(o.cfg.FilePrefix, name)
	created := ulid.Time(id.Time())
	if time.Since(created) >= o.cfg.TTL() {
		return fmt.Errorf("%s has expired: offloaded files are deleted %s after they are written; call the original tool again for a fresh result", path, o.cfg.TTL())
	}
	return fmt.Errorf("%s no longer exists; call the original tool again for a fresh result", path)
}

// maxHeaderBytes bounds the header line (it holds the query).
const maxHeaderBytes = 1 << 20

func readHeader(r *bufio.Reader) (OffloadHeader, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull || len(line) > maxHeaderBytes {
			return OffloadHeader{}, errors.New("does not start with an lro_header line")
		}
	}
	var h OffloadHeader
	if json.Unmarshal(line, &h) != nil || h.Type != HeaderType {
		return OffloadHeader{}, errors.New("does not start with an lro_header line")
	}
	return h, nil
}

// recipesOf returns the recipes of a file: the memory recipes of its
// detail level, or, for generic records, those inferred from them again.
func (o *Offloader) recipesOf(name string, h OffloadHeader) ([]Recipe, error) {
	if h.SchemaVersion != GenericSchemaVersion {
		rs, ok := o.templates.recipes[h.Detail]
		if !ok {
			return nil, fmt.Errorf("the header has an unknown detail level %q", h.Detail)
		}
		return rs, nil
	}
	f, err := o.opts.fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var records []json.RawMessage
	for sc.Scan() && len(records) <= inferSample {
		records = append(records, slices.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, errors.New("the file is empty")
	}
	return inferShape(records[1:]).recipes(), nil
}

// formatResults renders results one a line, at most the threshold's worth:
// whole results, and of a large array result, whole elements.
func (o *Offloader) formatResults(res jqsandbox.Result, raw bool) string {
	var b strings.Builder
	budget := o.cfg.ThresholdTokens
	shown := 0
	for _, v := range res.Values {
		text := renderValue(v, raw)
		t := o.EstimateTokens([]byte(text))
		if t <= budget {
			b.WriteString(text)
			b.WriteByte('\n')
			budget -= t
			shown++
			continue
		}
		if els, err := jsonscan.Elements(v); err == nil && len(els) > 0 {
			fit := 0
			for fit < len(els) {
				t := o.EstimateTokens(els[fit]) + 1
				if t > budget {
					break
				}
				budget -= t
				fit++
			}
			if fit > 0 {
				b.WriteString("[")
				for i, e := range els[:fit] {
					if i > 0 {
						b.WriteByte(',')
					}
					b.Write(e)
				}
				b.WriteString("]\n")
				fmt.Fprintf(&b, "[lro_extract: showing %d of %d elements of this array; narrow the query (a select, a map to fewer fields, or .[:N]) to see the rest]\n", fit, len(els))
				shown++
			}
		}
		break
	}
	total := len(res.Values) + res.Omitted
	switch {
	case total == 0:
		b.WriteString("[lro_extract: no results]\n")
	case shown < total:
		more := ""
		if res.Truncated {
			more = "at least "
		}
		fmt.Fprintf(&b, "[lro_extract: showing %d of %s%d results (%d left out); narrow the query, e.g. with a select or recipe params, to see the rest]\n", shown, more, total, total-shown)
	}
	return b.String()
}

func renderValue(v json.RawMessage, raw bool) string {
	if raw && len(v) > 0 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	return string(v)
}

func runError(err error, timeout time.Duration) string {
	var qe *jqsandbox.QueryError
	var he *jqsandbox.HaltError
	switch {
	case errors.As(err, &qe) && qe.Record > 0:
		return fmt.Sprintf("query failed on record %d: %s", qe.Record, qe.Message)
	case errors.As(err, &qe):
		return "query failed: " + qe.Message
	case errors.As(err, &he):
		return "query stopped with halt_error: " + he.Message()
	case errors.Is(err, jqsandbox.ErrTimeout):
		return fmt.Sprintf("query took longer than %s and was stopped; narrow it", timeout)
	case errors.Is(err, jqsandbox.ErrMemory):
		return "query needed too much memory and was stopped; narrow it"
	case errors.Is(err, jqsandbox.ErrTooComplex):
		return "query stopped: " + trimPrefix(err)
	case errors.Is(err, jqsandbox.ErrBusy):
		return "another query is still running; try again"
	}
	return trimPrefix(err)
}

// maxRecipeParam bounds a recipe parameter. Recipes run without the guards
// of custom queries, so their inputs are kept small: a regular expression
// of this size cannot compile into anything large (Go caps repetition).
const maxRecipeParam = 256

func checkRecipeParam(name string, v any) error {
	switch x := v.(type) {
	case string:
		if len(x) > maxRecipeParam {
			return fmt.Errorf("parameter %q is %d bytes long; at most %d", name, len(x), maxRecipeParam)
		}
		return nil
	case float64, bool:
		return nil
	}
	return fmt.Errorf("parameter %q must be a string, got %s", name, jsonText(v))
}

func trimPrefix(err error) string {
	return strings.TrimPrefix(err.Error(), "jqsandbox: ")
}

func paramList(ps []RecipeParam) string {
	if len(ps) == 0 {
		return "no parameters"
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return "the parameters " + strings.Join(names, ", ")
}
