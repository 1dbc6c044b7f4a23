package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// metricsHandler serves what reader collects in the Prometheus text
// format, the few lines of exposition the library's counters and
// histograms need, so that the example takes no exporter dependency. A
// real server plugs in the OpenTelemetry Prometheus or OTLP exporter
// instead: the library only speaks the metric API.
func metricsHandler(reader *sdkmetric.ManualReader) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(r.Context(), &rm); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		writeMetrics(w, rm)
	})
}

func writeMetrics(w io.Writer, rm metricdata.ResourceMetrics) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			name := promName(m.Name)
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				fmt.Fprintf(w, "# HELP %s_total %s\n# TYPE %s_total counter\n", name, m.Description, name)
				for _, p := range d.DataPoints {
					fmt.Fprintf(w, "%s_total%s %d\n", name, labels(p.Attributes, ""), p.Value)
				}
			case metricdata.Histogram[float64]:
				fmt.Fprintf(w, "# HELP %s_seconds %s\n# TYPE %s_seconds histogram\n", name, m.Description, name)
				for _, p := range d.DataPoints {
					var cum uint64
					for i, b := range p.Bounds {
						cum += p.BucketCounts[i]
						fmt.Fprintf(w, "%s_seconds_bucket%s %d\n", name, labels(p.Attributes, strconv.FormatFloat(b, 'g', -1, 64)), cum)
					}
					fmt.Fprintf(w, "%s_seconds_bucket%s %d\n", name, labels(p.Attributes, "+Inf"), p.Count)
					fmt.Fprintf(w, "%s_seconds_sum%s %g\n", name, labels(p.Attributes, ""), p.Sum)
					fmt.Fprintf(w, "%s_seconds_count%s %d\n", name, labels(p.Attributes, ""), p.Count)
				}
			}
		}
	}
}

// promName turns "lro.offload.bytes" into "lro_offload_bytes".
func promName(s string) string { return strings.ReplaceAll(s, ".", "_") }

func labels(set attribute.Set, le string) string {
	var parts []string
	for _, kv := range set.ToSlice() {
		parts = append(parts, fmt.Sprintf("%s=%q", promName(string(kv.Key)), kv.Value.Emit()))
	}
	sort.Strings(parts)
	if le != "" {
		parts = append(parts, fmt.Sprintf("le=%q", le))
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// newMetrics returns a meter provider for the offloader and the reader
// /metrics collects from.
func newMetrics() (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), reader
}

// shutdownMetrics releases the provider.
func shutdownMetrics(mp *sdkmetric.MeterProvider) { _ = mp.Shutdown(context.Background()) }
