//go:build linux

package extractbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/itchyny/gojq"
)

// headBytes is what the descriptor's commands let through: |head -c32768.
const headBytes = 32768

// gojqFloor runs filter over the records of the offloaded file at path
// as `tail -n +2 FILE | gojq [-r] [-s] FILTER | head -c32768` would, in
// this process (no process start: a floor below gojq's command): lines
// decoded with encoding/json, results encoded with gojq's own encoder,
// stopping once 32 KiB are written.
func gojqFloor(b *testing.B, path, filter string, slurp, raw bool, vars map[string]string) {
	q, err := gojq.Parse(filter)
	if err != nil {
		b.Fatal(err)
	}
	var names []string
	var values []any
	for k, v := range vars {
		names, values = append(names, "$"+k), append(values, v)
	}
	code, err := gojq.Compile(q, gojq.WithVariables(names))
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	if _, err := r.ReadSlice('\n'); err != nil { // the header
		b.Fatal(err)
	}
	var out bytes.Buffer
	run := func(v any) bool {
		iter := code.Run(v, values...)
		for {
			x, ok := iter.Next()
			if !ok {
				return true
			}
			if err, ok := x.(error); ok {
				b.Fatal(err)
			}
			if s, ok := x.(string); ok && raw {
				out.WriteString(s)
			} else {
				enc, _ := gojq.Marshal(x)
				out.Write(enc)
			}
			out.WriteByte('\n')
			if out.Len() >= headBytes {
				return false
			}
		}
	}
	dec := json.NewDecoder(r)
	var all []any
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else if err != nil {
			b.Fatal(err)
		}
		if slurp {
			all = append(all, v)
		} else if !run(v) {
			return
		}
	}
	if slurp {
		run(all)
	}
}

// shell runs cmd with sh; head closing the pipe makes jq die of SIGPIPE,
// which is the point of the comparison, and not an error.
func shell(b *testing.B, cmd string) {
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", cmd, err, out)
	}
}

// children returns the processes this process started that still run:
// its worker processes.
func children() map[int]bool {
	pids := map[int]bool{}
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, t := range tasks {
		data, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids[pid] = true
			}
		}
	}
	return pids
}
