package extract

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/structq"
)

// Bounds of a prefetch (see prefetch).
const (
	// prefetchMinBytes: a smaller file is decoded by its first query in
	// a few tens of milliseconds, which no prefetch need spare.
	prefetchMinBytes = 4 << 20
	// prefetchSample bounds what is read of a file's first records to
	// choose the fields to decode.
	prefetchSample      = 1 << 20
	prefetchSampleLines = 64
	// maxPrefetchValue: a field whose values take more (a memory's
	// content) is left for the queries that read it.
	maxPrefetchValue = 96
	// decodedValueBytes is what a decoded value costs beyond its JSON
	// bytes (interface, string header, map entry; an array's, each of its
	// elements too), and decodedRecordBytes what a record costs (where its
	// line is): Records.Bytes of 100,000 memories' namespace was 54 bytes
	// a record, of their memory_type with where the line is 60.
	decodedValueBytes  = 40
	decodedRecordBytes = 16
)

// prefetch hands an idle worker the file name, just published, to decode
// the fields a question most likely reads (see prefetchPaths), so that the
// first call of the file finds them in its cache (issue 40: the first
// question of 100,000 memories cost several times the next). It is best
// effort: only for a file large enough for its decoding to count, when
// queries run in workers, and a worker is idle (extractworker.Pool.Prefetch).
func (o *Tool) prefetch(name string) {
	if o.queriesInProcess() || o.closed.Load() || !extractworker.Supported() {
		return
	}
	lim := o.env.Limits.withDefaults()
	f, err := o.openOffload(name)
	if err != nil {
		return
	}
	defer f.Close()
	if !f.direct || f.size < prefetchMinBytes || f.size > lim.MaxFileBytes {
		return
	}
	src, err := o.fromStart(f)
	if err != nil {
		return
	}
	pool := lim.pool()
	paths := prefetchPaths(src, f.size, pool.CacheBytes/2)
	src.Close()
	if len(paths) == 0 {
		return
	}
	req := prefetchRequest(paths)
	req.Path, req.File, req.Limits = f.workerPath(o.env.FS), f.id, lim.sandbox()
	req.Limits.MaxOutputBytes = 16 << 10
	// The workers may still be starting (an offload starts them too):
	// a few tries, while nothing else runs.
	for range prefetchTries {
		if extractworker.PoolFor(pool).Prefetch(req, lim.Timeout, nil) || o.closed.Load() {
			return
		}
		time.Sleep(prefetchRetry)
	}
}

// A prefetch finds no idle worker (starting, or busy) prefetchTries times,
// prefetchRetry apart, before it gives up.
const (
	prefetchTries = 8
	prefetchRetry = 250 * time.Millisecond
)

// prefetchRequest returns the question that decodes paths of every record
// and keeps where each line is, as a question that outputs records whole
// does (its first record, the only output): its records answer every
// question, select or sort that reads no other field.
func prefetchRequest(paths []string) *extractworker.Request {
	list, _ := json.Marshal(paths)
	return &extractworker.Request{
		Query:   structq.RecordsFuncName + "($" + structq.Var + ";" + string(list) + ")",
		Vars:    []string{structq.Var},
		Values:  json.RawMessage(`[{"limit":1}]`),
		Trusted: true,
		Slurp:   true,
	}
}

// prefetchPaths reads the first records of r (past its header line), a
// file of size bytes, and returns the fields worth decoding before a
// question asks: the top-level fields, and those of objects one level
// down, whose values are short (a type, a name, a date, a number, a few
// tags; not a memory's content), the top level's first, the shortest
// first, as many as the
// records of the whole file, decoded, fit in room bytes.
func prefetchPaths(r io.Reader, size, room int64) []string {
	br := bufio.NewReaderSize(io.LimitReader(r, prefetchSample), 64<<10)
	if _, err := br.ReadSlice('\n'); err != nil { // the header
		return nil
	}
	type stat struct{ bytes, cost, n int }
	stats := map[string]*stat{}
	add := func(path string, v json.RawMessage) {
		s := stats[path]
		if s == nil {
			s = &stat{}
			stats[path] = s
		}
		s.bytes += len(v)
		s.cost += len(v) + decodedValueBytes
		if bytes.HasPrefix(v, []byte("[")) && !bytes.HasPrefix(v, []byte("[]")) {
			// Each element a value of its own (roughly: commas
			// inside strings count too).
			s.cost += decodedValueBytes * (1 + bytes.Count(v, []byte(",")))
		}
		s.n++
	}
	lines, lineBytes := 0, 0
	for lines < prefetchSampleLines {
		line, err := br.ReadBytes('\n')
		if err != nil {
			break // the last line of the sample may be cut: not counted
		}
		var rec map[string]json.RawMessage
		if json.Unmarshal(line, &rec) != nil {
			return nil // records that are not objects have no fields to name
		}
		lines++
		lineBytes += len(line)
		for k, v := range rec {
			if !plainKey(k) {
				continue
			}
			var sub map[string]json.RawMessage
			if bytes.HasPrefix(v, []byte("{")) && json.Unmarshal(v, &sub) == nil {
				for k2, v2 := range sub {
					if plainKey(k2) && !bytes.HasPrefix(v2, []byte("{")) {
						add(k+"."+k2, v2)
					}
				}
				continue
			}
			add(k, v)
		}
	}
	if lines == 0 {
		return nil
	}
	type field struct {
		path      string
		avg, cost int // JSON bytes, and decoded, of a value
	}
	var fields []field
	for p, s := range stats {
		if avg := s.bytes / s.n; avg <= maxPrefetchValue {
			fields = append(fields, field{p, avg, s.cost / s.n})
		}
	}
	slices.SortFunc(fields, func(a, b field) int {
		if da, db := strings.Count(a.path, "."), strings.Count(b.path, "."); da != db {
			return da - db // a record's own fields before its objects'
		}
		if a.cost != b.cost {
			return a.cost - b.cost
		}
		return strings.Compare(a.path, b.path)
	})
	records := size / int64(lineBytes/lines)
	per := int64(decodedRecordBytes)
	var paths []string
	for _, f := range fields {
		if records*(per+int64(f.cost)) > room {
			break
		}
		per += int64(f.cost)
		paths = append(paths, f.path)
	}
	return paths
}

// plainKey reports whether a question's dotted path can name the key k.
func plainKey(k string) bool { return k != "" && !strings.Contains(k, ".") }
