package lrotest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
)

var _ lro.FS = (*lrotest.MemFS)(nil)

// A full disk at the first write: the call still succeeds, with the
// records that fit the threshold and a warning, and no file is left.
func ExampleMemFS() {
	mem := lrotest.NewMemFS("/tmp/lro")
	mem.FailWrite(1, syscall.ENOSPC)
	off, _ := lro.New(lro.DefaultConfig(), lro.WithFS(mem), lro.WithoutEnv())
	defer off.Close()

	recs := make([]json.RawMessage, 200)
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"id":"m%d","title":"Memory number %d","namespace":"_semantic/ex%d","memory_type":"semantic","tags":["demo"],"created":"2026-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z","status":"active"}`, i, i, i%3))
	}
	out, _ := off.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: recs})
	fmt.Println(out.Action, out.Kept, "of 200 kept;", len(mem.Names()), "files left")
	fmt.Println(errors.Is(out.Err, syscall.ENOSPC), strings.HasPrefix(out.Warning, "lro: offloading failed"))
	// Output:
	// truncated 31 of 200 kept; 0 files left
	// true true
}
