package lrotest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
)

var _ lro.FS = (*lrotest.MemFS)(nil)

// A full disk at the first write: the call still succeeds, with the
// records that fit the threshold and a warning, and no file is left.
func ExampleMemFS() {
	mem := lrotest.NewMemFS("/tmp/lro")
	mem.FailWrite(1, syscall.ENOSPC)
	off, _ := lro.New(lro.DefaultConfig(), lro.WithFS(mem), lro.WithoutEnv())
	defer off.Close()

	recs := make([]json.RawMessage, 200)
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"id":"m%d","title":"Memory number %d","namespace":"_semantic/ex%d","memory_type":"semantic","tags":["demo"],"created":"2026-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z","status":"active"}`, i, i, i%3))
	}
	out, _ := off.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: recs})
	fmt.Println(out.Action, out.Kept, "of 200 kept;", len(mem.Names()), "files left")
	fmt.Println(errors.Is(out.Err, syscall.ENOSPC), strings.HasPrefix(out.Warning, "lro: offloading failed"))
	// Output:
	// truncated 31 of 200 kept; 0 files left
	// true true
}

// TestTTLExample runs the test ExampleMemFS_ttl shows.
func TestTTLExample(t *testing.T) { offloadedFileExpires(t) }

// TestReadOffloaded (issue 39.5): the path a descriptor gives reads the
// file's header and records, from a MemFS (which takes that path as well
// as the file's name) and from a directory.
func TestReadOffloaded(t *testing.T) {
	recs := make([]json.RawMessage, 200)
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"id":"r%d","text":"record number %d of the set"}`, i, i))
	}
	mem := lrotest.NewMemFS("/tmp/lro")
	dir := t.TempDir()
	for _, fsys := range []lro.FS{mem, lro.DirFS(dir)} {
		off, err := lro.New(lro.DefaultConfig(), lro.WithFS(fsys), lro.WithoutEnv(), lro.WithoutJanitor())
		if err != nil {
			t.Fatal(err)
		}
		defer off.Close()
		out, err := off.Offload(context.Background(), lro.ResultSet{Operation: "list", Records: recs, Generic: true})
		if err != nil || out.Action != lro.Offloaded {
			t.Fatalf("not offloaded: %v %s", err, out.Warning)
		}
		from := mem
		if fsys != lro.FS(mem) {
			from = nil // the disk
		}
		f, err := lrotest.ReadOffloaded(from, out.Response.FilePath)
		if err != nil {
			t.Fatal(err)
		}
		if f.Header.Operation != "list" || f.Header.Count != 200 || len(f.Records) != 200 || string(f.Records[7]) != string(recs[7]) {
			t.Errorf("%T: header %+v, %d records, the 8th %s", fsys, f.Header, len(f.Records), f.Records[7])
		}
	}
	name := mem.Names()[0]
	whole, err := mem.ReadFile("/tmp/lro/" + name)
	if err != nil {
		t.Fatal(err)
	}
	byName, _ := mem.ReadFile(name)
	if string(whole) != string(byName) {
		t.Error("ReadFile by path and by name differ")
	}
	if _, err := mem.ReadFile("/elsewhere/" + name); err == nil {
		t.Error("a path outside the MemFS's directory was read")
	}
}

// TestParseOffloadedRefuses: what is not an offloaded file is an error
// that says what is wrong with it.
func TestParseOffloadedRefuses(t *testing.T) {
	header := `{"type":"lro_header","operation":"list","query":null,"count":2,"schema_version":"1.0","timestamp":"2026-01-01T00:00:00.000Z","estimated_tokens":9,"detail":"light"}`
	for data, want := range map[string]string{
		"":                                  "no header line",
		`{"id":1}` + "\n":                   "not an lro header",
		header + "\n{\"a\":1}\n":            "counts 2 records, the file holds 1",
		header + "\n{\"a\":1}\n{oops}\n":    "line 3 is not JSON",
		header + "\n{\"a\":1}\n{\"b\":2}\n": "",
	} {
		_, err := lrotest.ParseOffloaded([]byte(data))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: got %v, want %q", data, err, want)
		}
	}
}

// TestHeaderIsTheSpecifications: lrotest.Header, which cannot name
// lro.OffloadHeader, has its JSON fields.
func TestHeaderIsTheSpecifications(t *testing.T) {
	fields := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			out = append(out, rt.Field(i).Tag.Get("json"))
		}
		return out
	}
	if a, b := fields(lrotest.Header{}), fields(lro.OffloadHeader{}); !slices.Equal(a, b) {
		t.Errorf("lrotest.Header %v, lro.OffloadHeader %v", a, b)
	}
}
