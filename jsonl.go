package lro

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/oklog/ulid/v2"
)

// HeaderType is the value of the type field of every header line.
const HeaderType = "lro_header"

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
}

// fileName returns {prefix}-{operation}-{ULID}.jsonl.
func fileName(prefix, operation string, id ulid.ULID) string {
	return prefix + "-" + operation + "-" + id.String() + ".jsonl"
}

// tempName is where a file is written before it is published. The leading
// dot and the suffix keep it out of the pattern that readers and recipes
// look for, so nobody can see a file that is still being written.
func tempName(final string) string { return "." + final + ".tmp" }

// parseFileName reports whether name is a published or temporary file of
// this prefix, and the ULID in it.
func parseFileName(prefix, name string) (op string, id ulid.ULID, temp, ok bool) {
	if rest, found := strings.CutPrefix(name, "."); found {
		if rest, found = strings.CutSuffix(rest, ".tmp"); !found {
			return "", id, false, false
		}
		name, temp = rest, true
	}
	rest, found := strings.CutPrefix(name, prefix+"-")
	if !found {
		return "", id, false, false
	}
	rest, found = strings.CutSuffix(rest, ".jsonl")
	if !found || len(rest) < ulid.EncodedSize+2 || rest[len(rest)-ulid.EncodedSize-1] != '-' {
		return "", id, false, false
	}
	op = rest[:len(rest)-ulid.EncodedSize-1]
	id, err := ulid.ParseStrict(rest[len(rest)-ulid.EncodedSize:])
	if err != nil || checkName(op) != nil {
		return "", id, false, false
	}
	return op, id, temp, true
}

// newID returns a ULID for t whose entropy comes from crypto/rand, which is
// safe for concurrent use: file names are unguessable and never collide.
func newID(t time.Time) (ulid.ULID, error) {
	return ulid.New(ulid.Timestamp(t), rand.Reader)
}

// bufPool holds write buffers: a large buffer turns many records into few
// system calls, and pooling it keeps an offload's allocations small.
var bufPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}

// writeFile writes set to a temporary file and publishes it. On failure the
// temporary file is removed; the returned written still names the path
// the file would have had.
func (o *Offloader) writeFile(set ResultSet, tokens int, now time.Time) (written, error) {
	id, err := newID(now)
	if err != nil {
		return written{}, fmt.Errorf("lro: generating a file name: %w", err)
	}
	final := fileName(o.cfg.FilePrefix, set.Operation, id)
	w := written{name: final, path: o.opts.fs.Path(final)}
	version := set.SchemaVersion
	switch {
	case version != "":
	case set.Generic:
		version = GenericSchemaVersion
	default:
		version = o.opts.schemaVersion
	}
	// Not HTML-escaped: a query holding '<' or '&' reads as it was typed.
	header, err := marshalText(OffloadHeader{
		Type:            HeaderType,
		Operation:       set.Operation,
		Query:           set.Query,
		Count:           len(set.Records),
		SchemaVersion:   version,
		Timestamp:       now.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		EstimatedTokens: tokens,
		Detail:          set.Detail,
	})
	if err != nil {
		return w, err
	}

	tmp := tempName(final)
	f, err := o.opts.fs.Create(tmp)
	if err != nil {
		return w, err
	}
	n, err := writeLines(f, header, set.Records, set.Validated)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = o.opts.fs.Rename(tmp, final)
	}
	if err != nil {
		if rerr := o.opts.fs.Remove(tmp); rerr != nil {
			err = errors.Join(err, fmt.Errorf("removing the partial file: %w", rerr))
		}
		return w, err
	}
	w.bytes = n
	return w, nil
}

// writeLines writes the header and one record per line.
func writeLines(f File, header []byte, records []json.RawMessage, valid bool) (int64, error) {
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
	var compact bytes.Buffer
	for i, r := range records {
		if !valid && !jsonscan.Valid(r) {
			return n, &RecordError{Index: i, Err: errNotJSON}
		}
		if jsonscan.HasNewline(r) {
			compact.Reset()
			if err := json.Compact(&compact, r); err != nil {
				return n, &RecordError{Index: i, Err: err}
			}
			r = compact.Bytes()
		}
		line(r)
	}
	// bufio.Writer remembers the first write error; Flush reports it.
	return n, bw.Flush()
}
