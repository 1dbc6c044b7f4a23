package extract

import (
	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/jqsandbox"
)

// warmSlot lets one warming run at a time in the process: warming is
// best effort, and a burst of offloads must not become a burst of
// decoding.
var warmSlot = make(chan struct{}, 1)

// WarmExtract caches the records of the file name, just published, for
// lro_extract, so that the first query of it need not decode them. It
// returns at once: the file is read again (from the page cache, most
// likely) and decoded on a goroutine of its own, and not at all when
// another warming runs, when lro_extract is not served, or when queries
// run in worker processes (the default on Linux), which decode a file on
// its first query with only what that query reads, and keep it: then it
// only makes sure that the workers run.
func (o *Tool) WarmExtract(name string) {
	if !o.native.Load() {
		return
	}
	if !o.queriesInProcess() {
		o.prestartWorkers() // they may have been stopped, idle
		o.inBackground(o.prefetch, name)
		return
	}
	if o.records == nil {
		return
	}
	o.inBackground(o.warm, name)
}

// inBackground runs warm (a warming or a prefetch) of name on a
// goroutine of its own, which Close waits for while it reads the file,
// one at a time in the process (a burst of offloads is not a burst of
// decoding): a warming asked while another runs is dropped.
func (o *Tool) inBackground(warm func(string), name string) {
	select {
	case warmSlot <- struct{}{}:
	default:
		return
	}
	o.warmMu.Lock()
	defer o.warmMu.Unlock()
	if o.closed.Load() {
		<-warmSlot
		return
	}
	o.warming.Add(1)
	go func() {
		defer func() { <-warmSlot; o.warming.Done() }()
		warm(name)
	}()
}

// prestartWorkers starts, off the call, the worker processes that run
// lro_extract's queries when they run in workers: the first query then
// finds one ready instead of waiting for a process to start (tens of
// milliseconds).
func (o *Tool) prestartWorkers() {
	if o.queriesInProcess() || o.closed.Load() || !extractworker.Supported() {
		return
	}
	o.noteWorker()
	extractworker.PoolFor(o.env.Limits.withDefaults().pool()).Prestart()
}

// queriesInProcess reports whether lro_extract's queries run in this
// process rather than in workers (see runQuery): only when chosen.
func (o *Tool) queriesInProcess() bool {
	return o.env.Limits.InProcess
}

// warm decodes the records of the file name into the cache, under the key
// lro_extract's calls look up, when they fit.
func (o *Tool) warm(name string) {
	f, err := o.openOffload(name)
	if err != nil {
		return
	}
	defer f.Close()
	if _, ok := o.records.Get(f.key); ok || !o.records.Fits(decodeFactor*f.size) {
		return
	}
	src, err := o.fromStart(f)
	if err != nil {
		return
	}
	defer src.Close()
	recs, err := jqsandbox.DecodeRecords(src, o.env.Limits.withDefaults().sandbox())
	if err != nil {
		return
	}
	o.records.Warm(f.key, recs)
}
