//go:build unix

package extractworker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBoundCountsCPUTimeNotWallTime: a query's bound is the CPU time its
// worker uses (issue 40: beside a build, queries of 0.8 s of CPU were
// stopped at 10 s of wall time). Waiting ten times the bound uses none of
// it; spinning uses it up, and the context says which bound ended it.
func TestBoundCountsCPUTimeNotWallTime(t *testing.T) {
	const bound = 30 * time.Millisecond
	ctx, used, stop := boundCPU(context.Background(), bound)
	defer stop()
	time.Sleep(10 * bound) // off CPU: not counted
	require.NoError(t, ctx.Err(), "stopped after %v of CPU time", used())
	for x := 0; ctx.Err() == nil; x++ { // on CPU
		if x%1_000_000 == 0 {
			_ = errors.New("spin")
		}
	}
	var f *Failure
	require.ErrorAs(t, context.Cause(ctx), &f)
	assert.Equal(t, "query took longer than 30ms and was stopped (30ms of CPU time, its bound); narrow it", f.Message)
	assert.GreaterOrEqual(t, used(), bound)
}

// TestStoppedQuerySaysWhichBound: the three messages of a query stopped
// for time name the bound that stopped it.
func TestStoppedQuerySaysWhichBound(t *testing.T) {
	assert.Equal(t, "query took longer than 10s and was stopped (10s of CPU time, its bound); narrow it", CPUFailure(10*time.Second).Message)
	assert.Equal(t, "query took longer than 42s and was stopped (wall-clock time: its worker got only 830ms of CPU time of the 10s it may use, the machine is busy); retry later, or narrow it", WallFailure(10*time.Second, 830*time.Millisecond).Message)
	assert.Equal(t, CPUFailure(10*time.Second), WallFailure(10*time.Second, 10*time.Second), "a worker that used its CPU time was stopped by it")
	assert.Equal(t, "query took longer than 10s and was stopped (wall-clock time); narrow it", TimeoutFailure(10*time.Second).Message)
}
