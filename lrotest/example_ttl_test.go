package lrotest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
)

// offloadedFileExpires is a test of the TTL: an offloaded file is kept
// until its TTL has passed, then the janitor deletes it. testing/synctest
// runs it in a bubble whose clock moves only when every goroutine in it
// waits, the janitor's included, so the hour passes at once and exactly.
// The Offloader must be made inside the bubble (its janitor is a goroutine
// of it) and closed before the bubble ends.
func offloadedFileExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := lrotest.NewMemFS("/tmp/lro")
		cfg := lro.DefaultConfig()
		cfg.TTLSeconds = 3600
		off, err := lro.New(cfg, lro.WithFS(mem), lro.WithoutEnv())
		if err != nil {
			t.Fatal(err)
		}
		defer off.Close()

		recs := make([]json.RawMessage, 300)
		for i := range recs {
			recs[i] = json.RawMessage(fmt.Sprintf(`{"id":"r%d","text":"record number %d of the set"}`, i, i))
		}
		out, err := off.Offload(context.Background(), lro.ResultSet{Operation: "list", Records: recs, Generic: true})
		if err != nil || out.Action != lro.Offloaded {
			t.Fatalf("not offloaded: %v %s", err, out.Warning)
		}

		time.Sleep(time.Hour - time.Second)
		synctest.Wait() // the janitor has done what it does by now
		if _, err := lrotest.ReadOffloaded(mem, out.Response.FilePath); err != nil {
			t.Fatalf("a second before its TTL: %v", err)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if names := mem.Names(); len(names) != 0 {
			t.Fatalf("past its TTL, left: %v", names)
		}
	})
}

// A test of the TTL with testing/synctest: it takes no wall-clock time.
func ExampleMemFS_ttl() {
	// In a _test.go file of yours, beside offloadedFileExpires above
	// (this package's own tests run it):
	//
	//	func TestOffloadedFileExpires(t *testing.T) { offloadedFileExpires(t) }
}
