package lro

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/require"
)

// RunCut runs command with bash and jq and returns its whole output. A
// command that ends with recipeCut runs without it too: its output as
// written must be the beginning of the whole, and at most 32 KiB.
func RunCut(t testing.TB, command string) []byte {
	t.Helper()
	testenv.JQ(t)
	run := func(command string, pipefail bool) []byte {
		args := []string{"-c", command}
		if pipefail {
			args = append([]string{"-o", "pipefail"}, args...)
		}
		out, err := exec.Command("bash", args...).Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s: %v\n%s", command, err, ee.Stderr)
		}
		require.NoError(t, err)
		return out
	}
	whole, cut := strings.CutSuffix(command, recipeCut)
	out := run(whole, true)
	// Under 32 KiB, head passes the whole through: the command as written
	// would print out again, for a second start of jq (most of the
	// recipe tests' time). LRO_TEST_FULL=1 runs it all the same.
	if cut && (len(out) > 32<<10 || testenv.Full()) {
		written := run(command, false) // as a model runs it: head may end jq early
		require.LessOrEqual(t, len(written), 32<<10)
		require.True(t, bytes.HasPrefix(out, written), "the cut output is the whole's beginning")
	}
	return out
}
