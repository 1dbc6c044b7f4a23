package lro

import (
	"bytes"
	"encoding/json"
)

func compactJSON(raw []byte) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
