package lro

import (
	"bytes"
	"encoding/json"

	"github.com/mcplro/lro/internal/jqsandbox"
)

// warmSlot lets one warming run at a time in the process: warming is
// best effort, and a burst of offloads must not become a burst of
// decoding.
var warmSlot = make(chan struct{}, 1)

// warmExtract caches, for lro_extract in this process, the records of the
// file name just published (its records, one JSON value each, exactly as
// written after the header), so that the first query of it need not
// decode them. It returns at once: the decoding runs on its own
// goroutine, and is skipped when another warming runs, when the file
// is already cached or cannot fit in the cache, or when it cannot be
// opened as an offloaded file. The caller must not modify records
// afterwards.
//
// Only this process's cache is warmed: when queries run in worker
// processes (the default on Linux), each worker decodes a file on its
// first query there, with the projection that query needs, and keeps it.
func (o *Offloader) warmExtract(name string, records []json.RawMessage) {
	if o.records == nil || len(records) == 0 {
		return
	}
	var size int64
	for _, r := range records {
		size += int64(len(r)) + 1
	}
	// Decoded whole, records take about decodeFactor times their size.
	if !o.records.Fits(decodeFactor * size) {
		return
	}
	select {
	case warmSlot <- struct{}{}:
	default:
		return // another warming runs: drop this one
	}
	go func() {
		defer func() { <-warmSlot }()
		o.warm(name, records)
	}()
}

// warm decodes records and caches them under the key of the file name,
// opened as lro_extract opens it, so that the key is the one its calls
// will look up.
func (o *Offloader) warm(name string, records []json.RawMessage) {
	f, err := o.openOffload(name)
	if err != nil {
		return
	}
	f.Close()
	if _, ok := o.records.Get(f.key); ok {
		return
	}
	var buf bytes.Buffer
	for _, r := range records {
		buf.Write(r)
		buf.WriteByte('\n')
	}
	if h := f.size - int64(buf.Len()); h <= 0 || h > maxHeaderBytes+1 {
		return // not the file's records
	}
	recs, err := jqsandbox.DecodeRecords(&buf, o.opts.extractLimits.withDefaults().sandbox())
	if err != nil {
		return
	}
	o.records.Warm(f.key, recs)
}
