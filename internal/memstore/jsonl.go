package memstore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ReadJSONL loads memories exported one per line, so real atlatl dumps and
// files written by the offloading library (which start with an lro_header
// line) can feed the same store as Generate. Errors name the 1-based line
// number because these files are usually edited or produced by hand.
func ReadJSONL(r io.Reader) ([]Memory, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var mems []Memory
	for lineNo := 1; ; lineNo++ {
		line, readErr := br.ReadBytes('\n')
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return nil, fmt.Errorf("memstore: line %d: %w", lineNo, readErr)
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			m, skip, err := parseLine(line)
			if err != nil {
				return nil, fmt.Errorf("memstore: line %d: %w", lineNo, err)
			}
			if !skip {
				mems = append(mems, m)
			}
		}
		if readErr != nil {
			return mems, nil
		}
	}
}

func parseLine(line []byte) (m Memory, skip bool, err error) {
	if line[0] != '{' {
		return m, false, errors.New("not a JSON object")
	}
	// Only pay for a second decode when the line could be a header.
	if bytes.Contains(line, []byte(`"lro_header"`)) {
		var probe struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &probe) == nil && probe.Type == "lro_header" {
			return m, true, nil
		}
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return m, false, err
	}
	if m.ID == "" {
		return m, false, errors.New(`memory has no "id"`)
	}
	return m, false, nil
}
