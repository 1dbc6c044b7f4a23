//go:build linux

package extractworker

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkersRunAtLowerPriority: every thread of a worker, those created
// while it ran a query included, has nice value workerNice (5), below the server's.
func TestWorkersRunAtLowerPriority(t *testing.T) {
	testenv.Parallel(t)
	p := testPool(t, Config{Workers: 1})
	path, id := jsonlFile(t, 1)
	// A query that allocates, so that the worker's collector runs on
	// threads of its own; with a deadline no busy machine reaches: a
	// worker at nice 5 beside busy processes gets little of a CPU (it
	// took over 10 s on a loaded machine).
	resp, err := p.Run(context.Background(), request(path, id, `[range(1000000)] | length`, 5*time.Minute), 5*time.Minute, 1<<20)
	require.NoError(t, err)
	require.Nil(t, resp.Failure)
	pids := p.Stats().PIDs
	require.Len(t, pids, 1)
	dir := "/proc/" + strconv.Itoa(pids[0]) + "/task"
	tasks, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Greater(t, len(tasks), 1)
	for _, task := range tasks {
		assert.Equal(t, workerNice, nice(t, dir+"/"+task.Name()+"/stat"), "thread %s", task.Name())
	}
	assert.Equal(t, 0, nice(t, "/proc/self/stat"), "the server keeps its own")
}

// nice reads the nice value, field 19 of a stat file.
func nice(t *testing.T, file string) int {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	fields := bytes.Fields(b[bytes.LastIndexByte(b, ')')+2:])
	n, err := strconv.Atoi(string(fields[16])) // field 19; state is field 3
	require.NoError(t, err)
	return n
}
