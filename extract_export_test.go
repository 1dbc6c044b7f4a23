package lro

import (
	"context"
	"time"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/textlines"
)

// ExtractWorkerPIDs returns the process ids of the workers that run o's
// lro_extract queries, for tests that watch their memory.
func ExtractWorkerPIDs(o *Offloader) []int { return o.extractor.WorkerStats().PIDs }

// ExtractLocalCopies returns how many local copies of a store's files o
// keeps for its workers.
func ExtractLocalCopies(o *Offloader) int { return o.extractor.LocalCopies() }

// ExtractWorkersBusy returns how many of the workers that run o's
// lro_extract queries hold one.
func ExtractWorkersBusy(o *Offloader) int { return o.extractor.WorkerStats().Busy }

// ExtractWorkersSupported reports whether this platform runs workers.
func ExtractWorkersSupported() bool { return extractworker.Supported() }

// openedFile is what the root's tests see of an offloaded file opened as
// lro_extract opens it.
type openedFile struct {
	key  string
	size int64
}

func (openedFile) Close() error { return nil }

func (o *Offloader) openOffload(name string) (openedFile, error) {
	key, size, err := o.extractor.OpenFile(name)
	return openedFile{key: key, size: size}, err
}

func (o *Offloader) ownFile(path string) (string, error) { return o.extractor.OwnFile(path) }

func (o *Offloader) warmExtract(name string) { o.extractor.WarmExtract(name) }

// extractCalls is the process's admission of lro_extract calls and
// resource reads.
var extractCalls admissionForTests

type admissionForTests struct{}

// enter admits a call of the session ctx names, as a call is admitted.
func (admissionForTests) enter(ctx context.Context, maxCalls int, timeout time.Duration) (*extract.Ticket, error) {
	return extract.Enter(ctx, maxCalls, timeout)
}

const (
	resourceRoot  = extract.ResourceRoot
	resourceLines = extract.ResourceLines
)

func (o *Offloader) parseResourceURI(uri string) (string, textlines.Range, bool, error) {
	return o.extractor.ParseResourceURI(uri)
}

func (o *Offloader) resourceLink(path string, size int64, text bool) *host.ResourceLink {
	return o.extractor.ResourceLink(path, size, text)
}

func (o *Offloader) resourceMaxBytes() int64 { return o.extractor.ResourceMaxBytes() }

// SetCopyFreshFor sets how long a local copy is used without asking the
// FS, until the test ends.
func SetCopyFreshFor(t interface{ Cleanup(func()) }, d time.Duration) {
	prev := extract.SetCopyFreshFor(d)
	t.Cleanup(func() { extract.SetCopyFreshFor(prev) })
}
