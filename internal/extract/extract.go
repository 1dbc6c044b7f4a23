package extract

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/jqsandbox"
	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/records"
	"github.com/mcplro/lro/internal/store"
	"github.com/oklog/ulid/v2"
)

// ExtractToolDefinition is lro.Host.ExtractToolDefinition: it marks the
// tool as served and starts its worker processes.
func (o *Tool) ExtractToolDefinition() host.ToolDefinition {
	o.native.Store(true)
	o.prestartWorkers()
	return host.ToolDefinition{
		Name: ToolName,
		Description: "Query a result set that was offloaded to a JSONL file, with a standard recipe (1-10, see the descriptor's jq_recipes) or a jq filter, " +
			"or read its lines: grep (a regular expression, as grep -n prints matches) or lines (a range such as 100-200, as sed -n prints them). " +
			"Line 1 is the first record; for a text offloaded as lines, these read the text itself: line N is its line N (the recipes' .line), ^ and $ anchor at its lines' ends. " +
			"Or ask without jq: where, select, sort, limit, aggregate, group_by. " +
			"Give exactly one of recipe, query, grep, lines and such a question. Results are capped; narrow the query to see more. " +
			"The count it states is exact; where it states none, count with query=\"[.[] | FILTER] | length\" and slurp=true. " +
			"Offloaded files are deleted " + o.env.TTL.String() + " after they are written; then call the original tool again.",
		InputSchema: slices.Clone(extractInputSchema),
	}
}

var extractInputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"file_path":{"type":"string","description":"The file_path of the offload descriptor."},` +
	`"recipe":{"type":"number","description":"A standard recipe number, 1-10."},` +
	`"query":{"type":"string","description":"A jq filter run on each record, e.g. select(.namespace | startswith(\"_semantic\")). Parameters are bound as $name."},` +
	`"params":{"type":"object","description":"Recipe parameters, e.g. {\"namespace\": \"_semantic\"}, {\"keyword\": \"cache\"}, {\"tag\": \"security\"}, {\"type\": \"episodic\"}; for a query, each becomes a $variable."},` +
	`"slurp":{"type":"boolean","description":"Run the query once over an array of all records (like jq -s), for group_by, sort_by, length. Recipes know their own mode."},` +
	`"grep":{"type":"string","description":"A regular expression (RE2) matched against each line (see lines), e.g. \"timeout|refused\"; matching lines come back numbered, as grep -n prints them."},` +
	`"ignore_case":{"type":"boolean","description":"With grep: match regardless of case."},` +
	`"context":{"type":"number","description":"With grep: how many lines to show before and after each match (0-100)."},` +
	`"lines":{"type":"string","description":"Lines to read: 100-200, 5, or 100- for the rest. Line 1 is the first record (a text's first line), not the header."},` +
	structuredSchema +
	`},"required":["file_path"]}`)

// structuredSchema documents the arguments of a question asked without jq
// (internal/structq), within structuredSchemaBudget tokens: a model reads
// only the schema. Fields are dotted paths into the record.
const structuredSchema = `"where":{"type":"array","description":"Instead of jq: records where all these hold. Comparisons are numeric when both sides are numbers or numeric strings (\"123.45\").",` +
	`"items":{"type":"object","properties":{"field":{"type":"string","description":"Dotted path, e.g. trace.parent"},` +
	`"op":{"enum":["eq","ne","lt","le","gt","ge","contains","matches","in","exists"],"description":"contains: case-insensitive substring (of any element of an array); matches: RE2; in: value is an array; exists: value is true or false (false: missing or null)"},` +
	`"value":{}},"required":["field","op"]}},` +
	`"select":{"type":"array","items":{"type":"string"},"description":"Fields to output (default: whole records). Answer: {matched, records}."},` +
	`"sort":{"type":"object","properties":{"field":{"type":"string"},"desc":{"type":"boolean"}},"required":["field"]},` +
	`"limit":{"type":"integer","minimum":1},` +
	`"aggregate":{"type":"object","properties":{"op":{"enum":["count","sum","avg","min","max","distinct"]},"field":{"type":"string"}},"required":["op"],"description":"Answer: {matched, value}. Sums are exact; distinct counts values; no field for count."},` +
	`"group_by":{"type":"string","description":"With aggregate: {matched, groups: [{key, value, count}]}, by value desc; limit keeps the top N."}`

// OutcomeDeadline is the lro.extract.calls outcome of a call whose query
// was stopped at its deadline: a refusal, counted apart because a rising
// rate of them says the deadline or the files are too large, not that
// the model asks badly.
const OutcomeDeadline = "deadline"

// Extract is lro.Offloader.Extract: it answers one lro_extract call.
func (o *Tool) Extract(ctx context.Context, args map[string]any) (string, error) {
	start := time.Now()
	stop := reportProgress(ctx, start, o.env.Limits.withDefaults().Timeout)
	text, err := o.extract(ctx, args)
	stop()
	outcome := "ok"
	if err != nil {
		outcome = "refused"
		var f *extractworker.Failure
		if errors.As(err, &f) && f.Deadline {
			outcome = OutcomeDeadline
		}
		if o.env.Store.Failed(ctx, ToolName, err) {
			outcome = o.env.OutcomeStoreError
		}
		text, err = extractFail(err)
	}
	o.env.Extracted(ctx, outcome, time.Since(start))
	return text, err
}

func (o *Tool) extract(ctx context.Context, args map[string]any) (string, error) {
	lim := o.env.Limits.withDefaults()
	call, err := parseExtractCall(args, lim.MaxQueryBytes)
	if err != nil {
		return "", err
	}
	ticket, err := enterCall(ctx, lim)
	if err != nil {
		return "", err
	}
	defer ticket.Leave()
	ctx = withCallBacklog(ctx)

	name, err := o.ownFile(call.path)
	if err != nil {
		return "", err
	}
	f, err := o.openOffload(name)
	if err != nil {
		o.records.Forget(name + "\x00")
		o.answers.Forget(name + "\x00")
		return "", o.openError(call.path, name, err)
	}
	defer func() { f.Close() }() // f may become a local copy
	if f.size > lim.MaxFileBytes {
		return "", fmt.Errorf("%s is %d bytes, more than the %d this tool reads", echo(call.path), f.size, lim.MaxFileBytes)
	}
	lf, err := o.isolate(ctx, f, lim)
	if err != nil {
		return "", err // f is still open, and closed by the deferred call
	}
	f = lf
	// Modes that do not run jq dispatch here, on the file opened safely.
	if call.grep != "" || call.lines != "" {
		text, err := o.extractText(ctx, call, f, lim, ticket)
		if err != nil {
			return "", err
		}
		return text, nil
	}
	text, err := o.extractJQ(ctx, call, f, lim, ticket)
	if err != nil {
		return "", err
	}
	return text, nil
}

// extractFail returns err as lro_extract's error for the model, capped.
func extractFail(err error) (string, error) {
	msg := err.Error()
	if len(msg) > maxErrorBytes {
		msg = records.ClipText(msg, maxErrorBytes) + fmt.Sprintf(" ...(%d bytes cut)", len(msg)-maxErrorBytes)
	}
	return "", errors.New(ToolName + ": " + msg)
}

// ownFile checks that path names a file this Offloader wrote and returns
// its name in the FS. Nothing is read before this check passes.
func (o *Tool) ownFile(path string) (string, error) {
	clean := filepath.Clean(path)
	if clean = store.ExtractPath(o.env.FS, path, clean); clean == "" {
		return "", fmt.Errorf("file_path %s must be the absolute path of an offload descriptor", echo(strconv.Quote(path)))
	}
	name := filepath.Base(clean)
	if o.env.FS.Path(name) != clean {
		return "", fmt.Errorf("file_path %s is not in the offload directory %s", echo(strconv.Quote(path)), filepath.Dir(o.env.FS.Path(name)))
	}
	_, id, temp, ok := store.ParseFileName(o.env.FilePrefix, name)
	if !ok || temp {
		return "", fmt.Errorf("file_path %s is not an offloaded file (%s-{operation}-{ULID}.jsonl)", echo(strconv.Quote(path)), o.env.FilePrefix)
	}
	if !o.env.Store.Owns(id) {
		return "", fmt.Errorf("file_path %s was offloaded by another server sharing the directory, not by %s (see lro.WithName)", echo(strconv.Quote(path)), o.Name())
	}
	return name, nil
}

func (o *Tool) openError(path, name string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot read %s: %w", echo(path), err)
	}
	_, id, _, _ := store.ParseFileName(o.env.FilePrefix, name)
	created := ulid.Time(id.Time())
	if time.Since(created) >= o.env.TTL {
		return fmt.Errorf("%s has expired: offloaded files are deleted %s after they are written; call the original tool again for a fresh result", echo(path), o.env.TTL)
	}
	return fmt.Errorf("%s no longer exists; call the original tool again for a fresh result", echo(path))
}

// header is what lro_extract reads of a file's header line
// (lro.OffloadHeader).
type header struct {
	Type          string `json:"type"`
	SchemaVersion string `json:"schema_version"`
	Detail        string `json:"detail"`
}

// maxHeaderBytes bounds the header line (it holds the query).
const maxHeaderBytes = 1 << 20

func readHeader(r *bufio.Reader) (header, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil {
			break
		}
		var se *store.Error
		if errors.As(err, &se) {
			return header{}, err
		}
		if err != bufio.ErrBufferFull || len(line) > maxHeaderBytes {
			return header{}, errors.New("does not start with an lro_header line")
		}
	}
	var h header
	if json.Unmarshal(line, &h) != nil || h.Type != HeaderType {
		return header{}, errors.New("does not start with an lro_header line")
	}
	return h, nil
}

// formatResults renders results one a line, at most the threshold's worth:
// whole results, and of a large array result, whole elements.
func (o *Tool) formatResults(res jqsandbox.Result, raw bool) string {
	var b bytes.Buffer
	budget := o.env.ThresholdTokens
	shown := 0
	for i, v := range res.Values {
		// The first elements of a larger array: shown as such.
		partial := res.Elements > 0 && i == len(res.Values)-1
		// Written, then measured where it stands, and taken back if it
		// does not fit: no copy of each result.
		start := b.Len()
		writeValue(&b, v, raw)
		if t := o.EstimateTokens(b.Bytes()[start:]); t <= budget && !partial {
			b.WriteByte('\n')
			budget -= t
			shown++
			continue
		}
		b.Truncate(start)
		if els, err := jsonscan.Elements(v); err == nil && len(els) > 0 {
			total := len(els)
			if partial {
				total = res.Elements
			}
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
				fmt.Fprintf(&b, "[lro_extract: showing %d of %d elements of this array; narrow the query (a select, a map to fewer fields, or .[:N]) to see the rest]\n", fit, total)
				shown++
			}
		}
		break
	}
	total := len(res.Values) + res.Omitted
	switch {
	case total == 0:
		b.WriteString("[lro_extract: no results]\n")
	case res.Uncounted:
		// What was counted depends on the time it had: not stated.
		fmt.Fprintf(&b, "[lro_extract: showing %d results; more left out, not all counted in time; count them with query=\"[.[] | FILTER] | length\" and slurp=true, or narrow the query]\n", shown)
	case shown < total:
		fmt.Fprintf(&b, "[lro_extract: showing %d of %d results (%d left out); narrow the query, e.g. with a select or recipe params, to see the rest]\n", shown, total, total-shown)
	}
	return b.String()
}

// writeValue writes a result: as it is encoded, or, raw, a string's text
// (as jq -r prints it).
func writeValue(b *bytes.Buffer, v json.RawMessage, raw bool) {
	if raw && len(v) > 0 && v[0] == '"' {
		if s, ok := jsonscan.Unquote(v); ok {
			b.WriteString(s)
			return
		}
	}
	b.Write(v)
}
