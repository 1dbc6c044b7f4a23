package extractworker

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/mcplro/lro/internal/jqsandbox"
)

// Engine runs queries over offloaded files, keeping decoded files and
// compiled recipes between them. A worker process has one; an Offloader
// that runs queries in its own process uses one too, so that both paths
// answer alike.
type Engine struct {
	Files   *FileCache
	Queries *QueryCache
	// Counts, when set, keeps the exact counts of queries in Stream mode,
	// so that the same query of a file again stops once its output is
	// full.
	Counts *CountCache
	// Answers, when set, keeps the answers of trusted requests, so that
	// the same question of a file again is answered at once.
	Answers *AnswerCache
}

// Input is the file a Request reads.
type Input struct {
	// Key identifies the file's content in the FileCache.
	Key string
	// Size is the file's size in bytes.
	Size int64
	// Open returns a reader of the file's JSONL lines (a leading header
	// line is skipped, except for a Request.Text, which reads the whole
	// file) and a function that releases it. It is called only when the
	// records are not cached, at most once.
	Open func() (io.Reader, func(), error)
	// OpenAt, when not nil, returns the bytes Open reads, at their
	// offsets from its first byte, and a function that releases them: a
	// select or a sort over the records of a large file, kept without
	// their lines, reads there the lines of the records it outputs. It is
	// called at most once.
	OpenAt func() (io.ReaderAt, func(), error)
}

// Run answers req. Everything it does, compiling and decoding included,
// counts against req.Limits.Timeout (in wall-clock time) and stops when
// ctx ends (a worker's CPU bound, see boundCPU); only a builtin call or a
// decoding step cannot be interrupted (a worker is killed for those).
func (e *Engine) Run(ctx context.Context, req *Request, in Input) *Response {
	if req.Text != nil {
		return runText(ctx, req, in)
	}
	answer := ""
	if e.Answers != nil {
		answer = answerKey(in.Key, req)
		if resp, ok := e.Answers.get(answer); ok {
			resp.Cached = true // the next question of the file is best sent here too
			return resp
		}
	}
	resp := e.run(ctx, req, in)
	e.Answers.put(answer, resp)
	return resp
}

// run is Run, of a request whose answer is not kept.
func (e *Engine) run(ctx context.Context, req *Request, in Input) *Response {
	start := time.Now()
	lim := req.Limits
	if lim.Timeout <= 0 {
		lim.Timeout = jqsandbox.DefaultTimeout
	}
	timeout := lim.Timeout
	left := func() (time.Duration, *Response) {
		d := timeout - time.Since(start)
		if d <= 0 {
			return 0, &Response{Failure: TimeoutFailure(timeout)}
		}
		return d, nil
	}

	var values []any
	if len(req.Values) > 0 {
		if err := json.Unmarshal(req.Values, &values); err != nil {
			return &Response{Failure: &Failure{Kind: KindInternal, Message: "malformed variable values: " + err.Error()}}
		}
	}
	var q *jqsandbox.Query
	var err error
	if req.Trusted && e.Queries != nil {
		q, err = e.Queries.Compile(req.Query, req.Vars, req.PatternCost)
	} else {
		q, err = jqsandbox.Compile(req.Query, req.Vars, lim)
	}
	if err != nil {
		return &Response{Failure: compileFailure(err)}
	}
	if _, r := left(); r != nil {
		return r
	}

	mode := jqsandbox.Stream
	if req.Slurp {
		mode = jqsandbox.Slurp
	}
	var recs *jqsandbox.Records
	decoded, cached, held := false, false, false
	if e.Files != nil {
		// Records a query kept of a file too large to decode beforehand.
		r, ok := e.Files.Get(in.Key)
		held = ok
		if ok && r.Projection().Covers(q.CacheProjection(mode)) && (!r.NeedsFile() || in.OpenAt != nil) {
			recs, decoded, cached = r, true, true
			if r.NeedsFile() {
				f, done, err := in.OpenAt()
				if err != nil {
					return &Response{Failure: Describe(err, timeout)}
				}
				defer done()
				recs = r.At(f)
			}
		}
	}
	// Decoded beforehand, its lines kept, only when they and the fields
	// fit: where the file can be read again (OpenAt, a worker) a file up
	// to a quarter of the budget, since a larger one keeps less as its
	// query runs (where each line is, not the line); else up to half.
	before := in.Size
	if in.OpenAt != nil {
		before *= 2
	}
	if !decoded && e.Files != nil && e.Files.Fits(before) && (!q.Skims(mode) || held) {
		// The file is small enough for its records to be kept: decode them
		// (unless the query needs few of them, see Query.Skims, and none
		// are kept yet) with what this query needs, or what the cache has and this query
		// needs, and keep them.
		recs, err = e.Files.Load(in.Key, q.CacheProjection(mode), func(p jqsandbox.Projection) (*jqsandbox.Records, error) {
			r, done, err := in.Open()
			if err != nil {
				return nil, err
			}
			defer done()
			return jqsandbox.DecodeProjectedSize(r, lim, p, in.Size)
		})
		if err != nil {
			return &Response{Failure: Describe(err, timeout)}
		}
		decoded = true
		_, cached = e.Files.Get(in.Key) // unless they did not fit
	}
	if ctx.Err() != nil { // decoding does not watch the context: a CPU bound met meanwhile
		return &Response{Failure: Describe(context.Cause(ctx), timeout)}
	}
	d, r := left()
	if r != nil {
		return r
	}
	lim.Timeout = d
	var counted string
	if mode == jqsandbox.Stream && e.Counts != nil && !strings.Contains(req.Query, "now") {
		// (now, the one builtin whose results change from run to run.)
		counted = countKey(in.Key, req)
		lim.KnownResults = e.Counts.get(counted)
	}
	var res jqsandbox.Result
	if decoded {
		res, err = q.RunRecords(ctx, recs, mode, values, lim)
	} else {
		rd, done, openErr := in.Open()
		if openErr != nil {
			return &Response{Failure: Describe(openErr, timeout)}
		}
		var kept *jqsandbox.Records
		var file io.ReaderAt
		if e.Files != nil && in.OpenAt != nil {
			f, release, err := in.OpenAt()
			if err != nil {
				done()
				return &Response{Failure: Describe(err, timeout)}
			}
			defer release()
			file = f
		}
		if e.Files != nil && mode == jqsandbox.Slurp && q.CacheProjection(mode).Whole() {
			// Whole records of a file too large to keep, slurped: the
			// heavy query (a sort of 100,000 memories takes most of a
			// worker's memory) has the heap the cache held.
			e.Files.Forget("")
		}
		if e.Files != nil {
			// The records of a large file are decoded as the query runs,
			// which may stop early, with what it reads; if it reads them
			// all, and what it keeps of them fits, they answer the next
			// queries that read no more.
			res, kept, err = q.RunKeeping(ctx, rd, mode, values, lim, e.Files.Room(), file)
		} else {
			res, err = q.Run(ctx, rd, mode, values, lim)
		}
		done()
		if kept != nil {
			// Said, so that the pool sends the next query of the file
			// to this worker.
			e.Files.Offer(in.Key, kept)
			_, cached = e.Files.Get(in.Key)
		}
	}
	if counted != "" && e.Counts.learn(counted, res, err, lim.KnownResults) {
		cached = true // the next query of the file is best sent here too
	}
	if e.Answers != nil && err == nil && !res.Uncounted && answerKey(in.Key, req) != "" {
		cached = true // its answer is kept (see Run)
	}
	resp := &Response{Values: res.Values, Truncated: res.Truncated, Omitted: res.Omitted, Uncounted: res.Uncounted, Elements: res.Elements, Cached: cached}
	if err != nil {
		resp.Failure = Describe(err, timeout)
		// A computation that runs on keeps the process busy: a worker
		// is replaced (a query in process ignores Retire).
		resp.Retire = errors.Is(err, jqsandbox.ErrStuck) || jqsandbox.Lingering()
	}
	return resp
}
