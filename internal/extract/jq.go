package extract

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcplro/lro/internal/admit"
	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/jqsandbox"
	"github.com/mcplro/lro/internal/recipes"
)

// Bytes an lro_extract call reserves in the admission budget, besides its
// results.
const (
	// headerReserve: the header line (at most maxHeaderBytes) and the
	// buffer it is read through.
	headerReserve = maxHeaderBytes + headerBuffer
	// headerBuffer is the buffer the header is read through: a header is
	// a few hundred bytes, and a worker reads the records itself (in
	// process, the records' reader reads past this buffer).
	headerBuffer = 4 << 10
	// decodeFactor: decoded records take several times their JSONL size
	// (4.4 measured for memories).
	decodeFactor = 5
	// maxSampleBytes bounds what is read of a generic file to infer its
	// recipes again.
	maxSampleBytes = 64 << 20
)

// extractJQ runs the recipe or query of call over the file f.
func (o *Tool) extractJQ(ctx context.Context, call extractCall, f *offloadFile, lim Limits, ticket *admit.Ticket) (string, error) {
	req := &extractworker.Request{Path: f.workerPath(o.env.FS), File: f.id, Limits: lim.sandbox()}
	if err := ticket.Reserve(headerReserve+2*int64(jqsandbox.DefaultMaxOutputBytes), lim.MaxCallBytes); err != nil {
		return "", err
	}
	r := bufio.NewReaderSize(f.f, headerBuffer)
	h, err := readHeader(r)
	if err != nil {
		return "", fmt.Errorf("%s: %w", echo(o.env.FS.Path(f.name)), err)
	}
	// Only a threshold's worth is shown: encode little more than that
	// (16 bytes a token, four times what estimators count), and stop
	// there: a list of a large file costs what it encodes, not what the
	// file holds. A large array (a slurped file sorted) is cut to the
	// elements that fit (jqsandbox.Result.Elements).
	req.Limits.MaxOutputBytes = max(16<<10, 16*o.env.ThresholdTokens)
	var values []any
	raw := false
	if call.structured != nil {
		values = structuredRequest(call.structured, req)
	} else if call.recipe != nil {
		rs, err := o.recipesOfFile(f, h, lim, ticket)
		if err != nil {
			return "", err
		}
		n, ok := recipeNumber(call.recipe, len(rs))
		if !ok {
			return "", fmt.Errorf("recipe must be a whole number from 1 to %d, got %s", len(rs), echo(jsonText(call.recipe)))
		}
		rec := rs[n-1]
		req.Query, req.Trusted, req.Slurp, raw = rec.Filter, true, rec.Slurp, rec.Raw
		for k := range call.params {
			if !slices.ContainsFunc(rec.Params, func(p recipes.RecipeParam) bool { return p.Name == k }) {
				return "", fmt.Errorf("recipe %d takes %s; it has no parameter %q", n, paramList(rec.Params), k)
			}
		}
		patterns := patternParams(rec.Filter)
		for _, p := range rec.Params {
			v, ok := call.params[p.Name]
			if !ok {
				v = p.Default
			}
			cost, err := checkRecipeParam(p.Name, v, slices.Contains(patterns, p.Name))
			if err != nil {
				return "", fmt.Errorf("recipe %d: %v", n, err)
			}
			req.Vars = append(req.Vars, p.Name)
			req.PatternCost += cost
			values = append(values, v)
		}
	} else {
		req.Query, req.Slurp = call.query, call.slurp
		for k := range call.params {
			req.Vars = append(req.Vars, k)
		}
		slices.Sort(req.Vars)
		for _, k := range req.Vars {
			values = append(values, call.params[k])
		}
	}
	if req.Values, err = json.Marshal(values); err != nil {
		return "", fmt.Errorf("params: %v", err)
	}
	resp, err := o.runQuery(ctx, req, f, r, lim, ticket)
	if err != nil {
		return "", err
	}
	if resp.Failure != nil {
		return "", resp.Failure
	}
	if call.structured != nil {
		return o.structuredAnswer(call.structured, resp, f)
	}
	return o.formatResults(jqsandbox.Result{Values: resp.Values, Truncated: resp.Truncated, Omitted: resp.Omitted, Uncounted: resp.Uncounted, Elements: resp.Elements}, raw), nil
}

// runQuery answers req: in a worker process, unless queries were chosen
// to run in this process (Limits.InProcess), reading the records
// that follow the header from rest (or, for a text request, the whole
// file). Where no worker can run the query, the call fails: it never runs
// in this process unasked.
func (o *Tool) runQuery(ctx context.Context, req *extractworker.Request, f *offloadFile, rest io.Reader, lim Limits, ticket *admit.Ticket) (*extractworker.Response, error) {
	if !lim.InProcess {
		if !extractworker.Supported() {
			o.unisolated(ctx, reasonUnsupported, errors.New(runtime.GOOS))
			return nil, fmt.Errorf("this server runs queries only in isolated worker processes, which it cannot start on %s; its operator may set lro.Limits.InProcess to run them in the server, without isolation", runtime.GOOS)
		}
		if !f.direct {
			return nil, errors.New("the file cannot be handed to a worker process") // isolate makes a copy first
		}
		o.noteWorker()
		maxResponse := req.Limits.MaxOutputBytes
		if req.Text != nil {
			maxResponse = req.Text.Budget + textNoteSlack
		}
		if maxResponse <= 0 {
			maxResponse = jqsandbox.DefaultMaxOutputBytes
		}
		resp, err := extractworker.PoolFor(lim.pool()).Run(ctx, req, lim.Timeout, maxResponse)
		if errors.Is(err, extractworker.ErrUnavailable) {
			o.unisolated(ctx, reasonNoWorker, err)
			return nil, fmt.Errorf("this server runs queries only in isolated worker processes, and none could be started (%s); try again later", strings.TrimPrefix(err.Error(), "extractworker: "))
		}
		return resp, err
	}
	o.unisolated(ctx, reasonInProcess, nil)
	if _, cached := o.records.Get(f.key); req.Text == nil && !cached && o.records.Fits(f.size) {
		if err := ticket.Reserve(decodeFactor*f.size, lim.MaxCallBytes); err != nil {
			return nil, err
		}
	}
	e := extractworker.Engine{Files: o.records, Queries: &o.queries, Answers: o.answers}
	return e.Run(ctx, req, extractworker.Input{Key: f.key, Size: f.size, Open: func() (io.Reader, func(), error) {
		return rest, func() {}, nil
	}}), nil
}

// Why a query ran without a worker process, or was refused for want of
// one: the reason attribute of lro.extract.unisolated.
const (
	reasonInProcess   = "in_process"  // Limits.InProcess: chosen
	reasonNoWorker    = "no_worker"   // refused: no worker could start
	reasonUnsupported = "unsupported" // refused: no workers on this system
)

// lastUnisolatedLog is when unisolated last logged (UnixNano): once a
// minute at most, so that a broken pool does not flood the log.
var lastUnisolatedLog atomic.Int64

// unisolated reports a query that runs without a worker process, or was
// refused for want of one: counted every time (lro.extract.unisolated),
// and logged, through logger (slog.Default without one, see [WithLogger])
// so that it is never dropped: a refusal at Warn at most once a minute, the
// choice to run queries in process at Info once.
func (o *Tool) unisolated(ctx context.Context, reason string, err error) {
	o.env.Unisolated(ctx, reason)
	l := o.logger()
	if reason == reasonInProcess {
		if !warnedInProcess.Swap(true) {
			l.LogAttrs(ctx, slog.LevelInfo, "lro: lro_extract runs queries in this process, without isolation (Limits.InProcess)", slog.String("tool", ToolName))
		}
		return
	}
	now := time.Now().UnixNano()
	last := lastUnisolatedLog.Load()
	if now-last < int64(time.Minute) || !lastUnisolatedLog.CompareAndSwap(last, now) {
		return
	}
	l.LogAttrs(ctx, slog.LevelWarn, "lro: lro_extract refused a query: no worker process can run it", slog.String("tool", ToolName), slog.String("reason", reason), slog.Any("error", err))
}

// warnedInProcess is set once the choice to run queries in process has
// been logged.
var warnedInProcess atomic.Bool

// recipesOfFile returns the recipes of a file: the memory recipes of its
// detail level, or, for generic records, those inferred from them again
// (read from the start of f, and kept by file). The call ticket, if any,
// reserves what is read.
func (o *Tool) recipesOfFile(f *offloadFile, h header, lim Limits, ticket *admit.Ticket) ([]recipes.Recipe, error) {
	if h.SchemaVersion != GenericSchemaVersion {
		rs, ok := o.env.Recipes(h.Detail)
		if !ok {
			return nil, fmt.Errorf("the header has an unknown detail level %s", echo(fmt.Sprintf("%q", h.Detail)))
		}
		return rs, nil
	}
	if rs, ok := genericRecipes.get(f.key); ok {
		return rs, nil
	}
	if ticket != nil {
		if err := ticket.Reserve(min(f.size, maxSampleBytes), lim.MaxCallBytes); err != nil {
			return nil, err
		}
	}
	src, err := o.fromStart(f)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	sc := bufio.NewScanner(io.LimitReader(src, maxSampleBytes))
	sc.Buffer(nil, 16<<20)
	var records []json.RawMessage
	for sc.Scan() && len(records) <= recipes.Sample {
		records = append(records, slices.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the records: %w", err)
	}
	if len(records) == 0 {
		return nil, errors.New("the file is empty")
	}
	rs := recipes.Infer(records[1:]).Recipes()
	genericRecipes.put(f.key, rs)
	return rs, nil
}

// fromStart returns a reader of f from its first byte: a section of the
// open file (never a second open, which could meet another file), or,
// for an FS that is not a directory, the file opened again.
func (o *Tool) fromStart(f *offloadFile) (io.ReadCloser, error) {
	if ra, ok := f.f.(io.ReaderAt); ok {
		return io.NopCloser(io.NewSectionReader(ra, 0, f.size)), nil
	}
	if f.direct {
		return nil, errors.New("cannot read the file again")
	}
	return o.env.FS.Open(f.name)
}
