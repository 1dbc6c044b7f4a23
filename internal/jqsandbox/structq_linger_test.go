package jqsandbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/structq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuestionStoppedFreesTheSlot: issue 38. In process, an exact sum
// stopped at its deadline kept the sandbox's run slot until it ended (its
// loop does not stop between records), and every later query was busy.
// Now the run ends at its deadline, the sum runs on without the slot, and
// a query is answered while it does; the next question waits for it
// within its own deadline.
func TestQuestionStoppedFreesTheSlot(t *testing.T) {
	var b strings.Builder
	for i := range 20_000 {
		// Exponents far apart: exact sums of big rationals, slow.
		fmt.Fprintf(&b, `{"id":%d,"amount":1.%de%d}`+"\n", i, i*7919, i%600-300)
	}
	lim := testLimits()
	spec, err := structq.Parse(map[string]any{"aggregate": map[string]any{"op": "sum", "field": "amount"}})
	require.NoError(t, err)
	q, err := CompileTrusted(spec.Program(), []string{structq.Var})
	require.NoError(t, err)
	recs, err := DecodeProjected(strings.NewReader(b.String()), lim, q.CacheProjection(Slurp))
	require.NoError(t, err)

	lim.Timeout = 200 * time.Millisecond // past the slurp, well before the sum's end
	_, err = q.RunRecords(context.Background(), recs, Slurp, []any{spec.Value()}, lim)
	require.ErrorIs(t, err, ErrTimeout)
	assert.NotErrorIs(t, err, ErrStuck, "the run ended at its deadline")
	require.True(t, Lingering(), "the sum runs on (a machine that sums 20,000 such numbers in 200 ms proves nothing here)")

	plain, err := Compile(`.amount`, nil, testLimits())
	require.NoError(t, err)
	res, err := plain.RunRecords(context.Background(), recs, Stream, nil, Limits{Timeout: time.Minute, MaxOutputBytes: 64})
	require.NoError(t, err, "the slot is free")
	assert.NotEmpty(t, res.Values)
	lingered := Lingering()

	_, err = q.RunRecords(context.Background(), recs, Slurp, []any{spec.Value()}, lim)
	assert.ErrorIs(t, err, ErrTimeout, "a question waits for the one lingering, within its deadline")
	assert.True(t, lingered, "answered while the stopped sum still ran")
	require.Eventually(t, func() bool { return !Lingering() }, 5*time.Minute, 10*time.Millisecond)
}
