package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro"
)

// runInProcess runs a recipe over the records of the file with gojq, for
// machines without the jq binary.
func runInProcess(r lro.Recipe, path string) (string, error) {
	q, err := gojq.Parse(r.ShellFilter())
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var records []any
	for first := true; sc.Scan(); first = false {
		if first {
			continue // the header
		}
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return "", err
		}
		records = append(records, v)
	}
	inputs := records
	if r.Slurp {
		inputs = []any{records}
	}
	var b strings.Builder
	for _, in := range inputs {
		iter := q.Run(in)
		for v, ok := iter.Next(); ok; v, ok = iter.Next() {
			if err, isErr := v.(error); isErr {
				return "", err
			}
			if s, isStr := v.(string); isStr && r.Raw {
				b.WriteString(s)
			} else {
				out, _ := gojq.Marshal(v)
				b.Write(out)
			}
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}
