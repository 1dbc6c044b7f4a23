// Command inithost is a host program of lro for the tests of its workers
// (see TestWorkerRunsNoHostInit): it offloads a result and runs two
// lro_extract queries at once, so that two workers start, and prints
// their answers. Its package initpkg counts its init function's runs.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/mcplro/lro"
	_ "github.com/mcplro/lro/testdata/inithost/initpkg"
)

func main() {
	cfg := lro.DefaultConfig()
	cfg.OutputDir = os.Args[1]
	o, err := lro.New(cfg, lro.WithExtractLimits(lro.ExtractLimits{Workers: 2}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer o.Close()
	records := make([]json.RawMessage, 2000)
	for i := range records {
		records[i] = fmt.Appendf(nil, `{"id":%d,"title":"record %d","content":"%0200d"}`, i, i, i)
	}
	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Generic: true, Records: records})
	if err != nil || out.Action != lro.Offloaded {
		fmt.Fprintln(os.Stderr, "not offloaded:", err, out.Warning)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	answers := make([]string, 2)
	for i := range answers {
		wg.Go(func() {
			text, err := o.Extract(context.Background(), map[string]any{"file_path": out.Response.FilePath, "query": fmt.Sprintf(`select(.id == %d) | .title`, i)})
			if err != nil {
				text = err.Error()
			}
			answers[i] = text
		})
	}
	wg.Wait()
	fmt.Print(answers[0], answers[1])
}
