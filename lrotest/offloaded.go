package lrotest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Offloaded is an offloaded file, read: its header line and its records.
type Offloaded struct {
	Header  Header
	Records []json.RawMessage // one a line after the header, as written
}

// Header is line 1 of an offloaded file, the fields of
// [github.com/mcplro/lro.OffloadHeader] (this package imports nothing of
// lro, so that lro's own tests may use it).
type Header struct {
	Type            string  `json:"type"` // "lro_header"
	Operation       string  `json:"operation"`
	Query           *string `json:"query"`
	Count           int     `json:"count"` // the records after the header
	SchemaVersion   string  `json:"schema_version"`
	Timestamp       string  `json:"timestamp"`
	EstimatedTokens int     `json:"estimated_tokens"`
	Detail          string  `json:"detail"`
	Preamble        string  `json:"preamble,omitempty"`
}

// ReadOffloaded reads the offloaded file at path, the file_path of a
// descriptor: from mem when it is not nil, else from the disk (a server
// whose Config.OutputDir is a directory). It checks what a reader relies
// on: a header line of type "lro_header" whose count is the number of
// record lines, each of them JSON.
func ReadOffloaded(mem *MemFS, path string) (*Offloaded, error) {
	var data []byte
	var err error
	if mem != nil {
		data, err = mem.ReadFile(path)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	return ParseOffloaded(data)
}

// ParseOffloaded parses the contents of an offloaded file, as
// [ReadOffloaded] does.
func ParseOffloaded(data []byte) (*Offloaded, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1) // a line may be as long as the file
	if !sc.Scan() {
		return nil, fmt.Errorf("lrotest: the file is empty: no header line")
	}
	var f Offloaded
	if err := json.Unmarshal(sc.Bytes(), &f.Header); err != nil || f.Header.Type != "lro_header" {
		return nil, fmt.Errorf("lrotest: line 1 is not an lro header: %.200s", sc.Bytes())
	}
	for n := 2; sc.Scan(); n++ {
		if !json.Valid(sc.Bytes()) {
			return nil, fmt.Errorf("lrotest: line %d is not JSON: %.200s", n, sc.Bytes())
		}
		f.Records = append(f.Records, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lrotest: %w", err)
	}
	if f.Header.Count != len(f.Records) {
		return nil, fmt.Errorf("lrotest: the header counts %d records, the file holds %d", f.Header.Count, len(f.Records))
	}
	return &f, nil
}
