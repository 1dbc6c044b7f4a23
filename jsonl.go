package lro

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/recipes"
	"github.com/mcplro/lro/internal/records"
	"github.com/mcplro/lro/internal/store"
	"github.com/oklog/ulid/v2"
)

// The format's fixed names and numbers: what every file and descriptor
// holds, whatever the configuration.
const (
	// HeaderType is the value of the type field of every header line.
	HeaderType = extract.HeaderType
	// GenericSchemaVersion is the schema_version of the header of a file
	// whose records are not MIF memories; lro_extract then infers its
	// recipes from the records, as the descriptor did.
	GenericSchemaVersion = extract.GenericSchemaVersion
	// RecipeCount is the number of recipes in every descriptor, as the
	// specification requires: memory or generic.
	RecipeCount = recipes.Count
	// ExtractToolName is the name of the native extraction tool.
	ExtractToolName = extract.ToolName
)

// OffloadHeader is line 1 of every offloaded file.
type OffloadHeader struct {
	Type            string  `json:"type"`             // always HeaderType
	Operation       string  `json:"operation"`        // e.g. "recall"
	Query           *string `json:"query"`            // the query, or null
	Count           int     `json:"count"`            // record lines after the header
	SchemaVersion   string  `json:"schema_version"`   // MIF version, or GenericSchemaVersion
	Timestamp       string  `json:"timestamp"`        // RFC 3339, UTC, when the file was written
	EstimatedTokens int     `json:"estimated_tokens"` // estimated size of the set
	Detail          Detail  `json:"detail"`           // detail level of the records
	// Preamble is the text a tool result put before the JSON it held
	// ("Directory tree for /srv:"), whole, or the different texts of the
	// items that repeated it, a blank line between them; absent when
	// there was none. Each is at most 512 bytes.
	Preamble string `json:"preamble,omitempty"`
}

// A RecordError reports a record that cannot be written as a JSONL line.
type RecordError struct {
	Index int // position in ResultSet.Records
	Err   error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("lro: record %d cannot be a JSONL line: %v", e.Index, e.Err)
}

var errNotJSON = errors.New("not a single valid JSON value")

func (e *RecordError) Unwrap() error { return e.Err }

// written is a published file.
type written struct {
	name  string // in the FS
	path  string
	bytes int64
	stats *recipes.Stats // what writing learned of the records
}

// bufPool holds write buffers: a large buffer turns many records into few
// system calls, and pooling it keeps an offload's allocations small.
var bufPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}

// writeFile writes set to a temporary file and publishes it, within the
// quota (see reserve; a wait for room ends with ctx). On failure the
// temporary file is removed; the returned written still names the path
// the file would have had.
//
// The file's expiry is recorded as its modification time before it is
// published, and its name carries this Offloader's tag (see neighbours.go).
func (o *Offloader) writeFile(ctx context.Context, set ResultSet, tokens int, now time.Time) (written, error) {
	id, err := o.store.NewID(now)
	if err != nil {
		return written{}, err
	}
	final := store.FileName(o.cfg.FilePrefix, set.Operation, id)
	w := written{name: final, path: o.opts.fs.Path(final)}
	version := set.SchemaVersion
	switch {
	case version != "":
	case set.Generic:
		version = GenericSchemaVersion
	default:
		version = o.opts.schemaVersion
	}
	query := set.Query
	if query != nil && len(*query) > records.MaxCopiedBytes {
		q := records.ClipCopied(*query)
		query = &q
	}
	// Not HTML-escaped: a query holding '<' or '&' reads as it was typed.
	header, err := records.MarshalText(OffloadHeader{
		Type:            HeaderType,
		Operation:       set.Operation,
		Query:           query,
		Count:           set.count(),
		SchemaVersion:   version,
		Timestamp:       now.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		EstimatedTokens: tokens,
		Detail:          set.Detail,
		Preamble:        set.preamble,
	})
	if err != nil {
		return w, err
	}

	// The size of the file is known before a byte is written, to within
	// the line breaks that compacting a record removes: take the room
	// first, so that the directory never holds more than the quota.
	src := set.source()
	need := int64(len(header)) + 1 + src.Size() + int64(src.Count())
	tmp := store.TempName(final)
	c, evicted, expired, err := o.roomFor(ctx, src, tmp, w.path, need)
	for _, e := range expired {
		o.emitExpired(context.WithoutCancel(ctx), e)
	}
	for _, e := range evicted {
		o.emitEvicted(context.WithoutCancel(ctx), e)
	}
	if err != nil {
		return w, err
	}
	committed := false
	defer func() {
		if !committed { // failed, or an FS panicked: never leak the room
			o.store.Release(tmp, c)
		}
	}()

	f, err := o.opts.fs.Create(tmp)
	if err != nil {
		return w, err
	}
	w.stats = recipes.NewStats(set.Generic)
	if set.checks.namespaces != nil {
		w.stats.Namespaces = set.checks.namespaces // counted as the records were checked
	}
	n, err := writeLines(f, header, src, set.Validated, &set.checks, w.stats)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	// The TTL runs from when the file is published, not from when the
	// call began: a descriptor always has the whole TTL ahead of it,
	// however long the write took.
	expires := store.ExpiryStamp(time.Now().Add(o.cfg.TTL()))
	if err == nil {
		err = o.store.StampExpiry(tmp, now, expires)
	}
	if err == nil {
		err = o.opts.fs.Rename(tmp, final)
	}
	if err != nil {
		if rerr := o.opts.fs.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("removing the partial file: %w", rerr))
		}
		return w, err
	}
	c.Room += handOver(src)
	o.store.Commit(tmp, final, c, n, ulid.Time(id.Time()), expires)
	committed = true
	o.extractor.WarmExtract(final)
	w.bytes = n
	return w, nil
}

// roomHolder is a record source that holds room of the quota already: a
// streamed result's spool.
type roomHolder interface {
	room() int64
	holder() string // the temporary name the room is held for
	handOver()
}

// roomFor takes the room of a file of need bytes for tmp and returns its
// claim. Records that hold room already (a spool) give it to their file,
// which grows it by the difference, and waits for room only as the
// oldest write in progress may (see mayWait). Others wait for room until
// ctx ends.
func (o *Offloader) roomFor(ctx context.Context, src records.Source, tmp, path string, need int64) (store.Claim, []FileEvictedEvent, []FileExpiredEvent, error) {
	if h, ok := src.(roomHolder); ok {
		if held := h.room(); held > 0 {
			extra := max(need-held, 0)
			evicted, expired, err := o.store.Grow(ctx, tmp, h.holder(), path, extra, need)
			return store.Claim{Room: extra, Disk: need}, evicted, expired, err
		}
	}
	evicted, expired, err := o.store.Reserve(ctx, tmp, path, need)
	return store.Claim{Room: need, Disk: need}, evicted, expired, err
}

// handOver moves the room src holds, if any, to the file just published
// from it, and returns how much that was.
func handOver(src records.Source) int64 {
	h, ok := src.(roomHolder)
	if !ok {
		return 0
	}
	held := h.room()
	h.handOver()
	return held
}

// writeLines writes the header and one record per line, and learns the
// records' stats in the same pass. Records that checks knows need no
// other look: the others are checked here, unless valid says they are
// JSON, and looked at for line breaks.
func writeLines(f File, header []byte, src records.Source, valid bool, checks *recordChecks, st *recipes.Stats) (int64, error) {
	bw := bufPool.Get().(*bufio.Writer)
	bw.Reset(f)
	defer func() {
		bw.Reset(nil)
		bufPool.Put(bw)
	}()
	var n int64
	line := func(p []byte) {
		m, _ := bw.Write(p)
		_ = bw.WriteByte('\n')
		n += int64(m) + 1
	}
	line(header)
	var (
		compact bytes.Buffer
		recErr  error
	)
	err := src.Each(func(i int, r *records.Record) bool {
		p := r.Line
		ok, newline := checks.checked(i)
		if !ok {
			if !valid && !jsonscan.Valid(p) {
				recErr = &RecordError{Index: i, Err: errNotJSON}
				return false
			}
			newline = jsonscan.HasNewline(p)
		}
		if newline {
			compact.Reset()
			if err := json.Compact(&compact, p); err != nil {
				recErr = &RecordError{Index: i, Err: err}
				return false
			}
			p = compact.Bytes()
		}
		line(p)
		st.Add(r, ok && checks.namespaces != nil)
		return true
	})
	if recErr != nil {
		return n, recErr
	}
	if err != nil {
		return n, err
	}
	// bufio.Writer remembers the first write error; Flush reports it.
	return n, bw.Flush()
}
