//go:build linux

package lro_test

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
)

// TestExtractRecipesBesideBusyLoops: issue 40. A query's bound is its
// worker's CPU time, so every recipe of a descriptor of 100,000 memories
// is answered beside eight busy loops (a heavy build beside the agent),
// which leave the workers, at nice 5, little CPU: with a bound in wall
// time, 3 of 10 were stopped after about 10 s of wall time for 0.5 s of
// CPU. Slow, and it loads the machine, which would disturb every test
// beside it (CI's timing bounds among them): LRO_TEST_LOAD=1 runs it, on
// its own (go test -run TestExtractRecipesBesideBusyLoops .).
func TestExtractRecipesBesideBusyLoops(t *testing.T) {
	testenv.SkipUnlessLoad(t)
	if !lro.ExtractWorkersSupported() {
		t.Skip("no worker processes on this platform")
	}
	o := newOffloader(t, nil)
	path := offloadMemories(t, o, 100_000)
	for range 8 {
		loop := exec.Command("bash", "-c", "while :; do :; done")
		loop.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := loop.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { loop.Process.Kill(); loop.Wait() })
	}
	answered := 0
	for recipe := 1; recipe <= 10; recipe++ {
		args := map[string]any{"file_path": path, "recipe": recipe}
		if recipe == 3 || recipe == 10 {
			args["params"] = map[string]any{"keyword": "quasar"}
		}
		start := time.Now()
		_, err := o.Extract(context.Background(), args)
		t.Logf("recipe %d: %v, %v", recipe, time.Since(start).Round(time.Millisecond), err)
		if err == nil {
			answered++
		}
	}
	assert.Equal(t, 10, answered, "recipes answered beside eight busy loops")
}
