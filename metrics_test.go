package lro_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// sums collects the reader's counters: name and attribute value to sum.
func sums(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, lro.MeterName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					key := m.Name
					for _, kv := range p.Attributes.ToSlice() {
						key += " " + kv.Value.Emit()
					}
					out[key] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[m.Name+" count"] += int64(p.Count)
					key := m.Name
					for _, kv := range p.Attributes.ToSlice() {
						key += " " + kv.Value.Emit()
					}
					out[key+" count"] += int64(p.Count)
				}
			}
		}
	}
	return out
}

func TestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	fsys := lrotest.NewMemFS("/lro")
	o := newOffloader(t, nil, lro.WithMeterProvider(mp), lro.WithFS(fsys))
	ctx := context.Background()

	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 60, lro.DetailFull)})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action)
	data, err := fsys.ReadFile(out.Response.FilePath[len("/lro/"):])
	require.NoError(t, err)

	_, err = o.Extract(ctx, map[string]any{"file_path": out.Response.FilePath, "lines": "1-2"})
	require.NoError(t, err)
	_, err = o.Extract(ctx, map[string]any{"file_path": "/etc/passwd", "recipe": 1})
	require.Error(t, err)

	fsys.FailCreate(errors.New("disk full"))
	out, err = o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 60, lro.DetailFull)})
	require.NoError(t, err)
	require.Equal(t, lro.Truncated, out.Action)

	got := sums(t, reader)
	assert.Equal(t, int64(1), got["lro.offloads recall"])
	assert.Equal(t, int64(len(data)), got["lro.offload.bytes recall"], "the file's size")
	assert.Greater(t, got["lro.offload.tokens recall"], int64(1600))
	assert.Equal(t, int64(2), got["lro.offload.duration count"])
	assert.Equal(t, int64(1), got["lro.offload.duration recall ok count"])
	assert.Equal(t, int64(1), got["lro.offload.duration recall fallback count"], "a failed write is timed too (issue 32.3)")
	assert.Equal(t, int64(1), got["lro.fallbacks recall"])
	assert.Equal(t, int64(1), got["lro.extract.calls ok"])
	assert.Equal(t, int64(1), got["lro.extract.calls refused"])
	assert.Equal(t, int64(2), got["lro.extract.duration count"])
}

func TestOffloadWithoutMeterProvider(t *testing.T) {
	o := newOffloader(t, nil)
	_, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: memories(t, 60, lro.DetailFull)})
	require.NoError(t, err, "the no-op instruments need no provider")
}

func TestMetricsCountEvictions(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	recs := memories(t, 60, lro.DetailFull)
	probe := newOffloader(t, nil)
	out, err := probe.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: recs})
	require.NoError(t, err)
	size := int64(len(readFile(t, out.Response.FilePath)))

	// Room for one file: the second offload evicts the first.
	o := newOffloader(t, func(c *lro.Config) { c.MaxDirBytes = size + size/2 }, lro.WithMeterProvider(mp))
	for range 2 {
		out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: recs})
		require.NoError(t, err)
		require.Equal(t, lro.Offloaded, out.Action)
	}
	got := sums(t, reader)
	assert.Equal(t, int64(2), got["lro.offloads recall"])
	assert.Equal(t, int64(1), got["lro.files.removed evicted"])
}

// Issue 26.5: the duration histograms have bounds that fit latencies, from
// sub-millisecond to a minute, so that an offload of a few milliseconds
// does not land in the SDK's default first bucket (le=5 s) with all the
// others.
func TestMetricsDurationBuckets(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	o := newOffloader(t, nil, lro.WithMeterProvider(mp))
	ctx := context.Background()
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 60, lro.DetailFull)})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action, out.Warning)
	_, err = o.Extract(ctx, map[string]any{"file_path": out.Response.FilePath, "lines": "1-2"})
	require.NoError(t, err)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	seen := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				continue
			}
			for _, p := range h.DataPoints {
				seen++
				assert.Equal(t, lro.DurationBuckets, p.Bounds, m.Name)
				assert.Less(t, p.Bounds[0], 0.001, "sub-millisecond")
				assert.GreaterOrEqual(t, p.Bounds[len(p.Bounds)-1], 30.0, "tens of seconds")
				// The observation lands in a bucket below one second,
				// not in the first of the SDK's defaults.
				below := uint64(0)
				for i, b := range p.Bounds {
					if b <= 1 {
						below += p.BucketCounts[i]
					}
				}
				assert.Equal(t, p.Count, below, m.Name)
			}
		}
	}
	assert.Equal(t, 2, seen, "lro.offload.duration and lro.extract.duration")
}
