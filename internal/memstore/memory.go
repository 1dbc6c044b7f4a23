// Package memstore is a deterministic, in-memory store of MIF memories
// (Memory Interchange Format, as used by the atlatl memory system).
//
// It exists so the example memory server, the quickstart demo and the
// benchmarks can produce realistic, reproducible tool results of any size
// without a database or network dependency.
package memstore

import "fmt"

// Memory is the full MIF object. Field order matters: encoding/json emits
// fields in declaration order, and callers rely on the identifying fields
// coming first so truncated or streamed output stays readable.
type Memory struct {
	ID            string         `json:"id"`
	MemoryType    string         `json:"memory_type"`
	Title         string         `json:"title"`
	Namespace     string         `json:"namespace"`
	Tags          []string       `json:"tags"`
	Created       string         `json:"created"`
	Modified      string         `json:"modified"`
	Status        string         `json:"status"`
	Content       string         `json:"content"`
	Summary       string         `json:"summary"`
	Entities      []Entity       `json:"entities,omitempty"`
	Relationships []Relationship `json:"relationships,omitempty"`
	WikiLinks     []string       `json:"wiki_links,omitempty"`
	Provenance    Provenance     `json:"provenance"`
	Temporal      Temporal       `json:"temporal"`
	Extensions    map[string]any `json:"extensions,omitempty"`
	Citations     []Citation     `json:"citations,omitempty"`
}

// Entity names something a memory is about, so clients can link memories
// that mention the same system or person.
type Entity struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Relationship is a typed edge to another memory, referenced by its ID.
type Relationship struct {
	Type   string `json:"type"`
	Target string `json:"target"`
}

// Citation points at an external source backing the memory.
type Citation struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// Provenance records how much a memory can be trusted and where it came from.
type Provenance struct {
	Confidence float64 `json:"confidence"`
	TrustLevel string  `json:"trust_level"`
	SourceType string  `json:"source_type"`
	Agent      string  `json:"agent"`
}

// Temporal bounds a memory's validity and describes how its relevance fades.
// Zero ValidUntil and TTLSeconds mean "no bound" and are omitted from JSON.
type Temporal struct {
	ValidFrom  string `json:"valid_from"`
	ValidUntil string `json:"valid_until,omitempty"`
	TTLSeconds int    `json:"ttl_seconds,omitempty"`
	Decay      Decay  `json:"decay"`
}

// Decay parameterizes the relevance decay model applied by atlatl.
type Decay struct {
	Model        string  `json:"model"`
	HalfLifeDays int     `json:"half_life_days"`
	Strength     float64 `json:"strength"`
}

// Light is the cheapest projection: enough to identify and filter memories
// without paying for their text.
type Light struct {
	ID         string   `json:"id"`
	MemoryType string   `json:"memory_type"`
	Title      string   `json:"title"`
	Namespace  string   `json:"namespace"`
	Tags       []string `json:"tags"`
	Created    string   `json:"created"`
	Modified   string   `json:"modified"`
	Status     string   `json:"status"`
}

// Medium adds the text and a flattened confidence, which is what most
// prompts need; the provenance and temporal details are left to full.
type Medium struct {
	Light              // encoding/json flattens it: the light fields come first
	Content    string  `json:"content"`
	Summary    string  `json:"summary"`
	Confidence float64 `json:"confidence"`
}

// Light returns the light projection. Tags are never nil so the JSON
// always carries an array, which keeps client schemas simple.
func (m *Memory) Light() Light {
	return Light{
		ID:         m.ID,
		MemoryType: m.MemoryType,
		Title:      m.Title,
		Namespace:  m.Namespace,
		Tags:       nonNil(m.Tags),
		Created:    m.Created,
		Modified:   m.Modified,
		Status:     m.Status,
	}
}

// Medium returns the medium projection; see Light for the tags guarantee.
func (m *Memory) Medium() Medium {
	return Medium{
		Light:      m.Light(),
		Content:    m.Content,
		Summary:    m.Summary,
		Confidence: m.Provenance.Confidence,
	}
}

// Detail levels accepted by Project and FormatContext.
const (
	DetailLight  = "light"
	DetailMedium = "medium"
	DetailFull   = "full"
)

// Project lets tools take the detail level straight from user input and
// hand the result to encoding/json, so invalid levels surface as errors
// instead of silently returning a different shape.
func Project(m *Memory, detail string) (any, error) {
	if m == nil {
		return nil, fmt.Errorf("memstore: project %q: nil memory", detail)
	}
	switch detail {
	case DetailLight:
		return m.Light(), nil
	case DetailMedium:
		return m.Medium(), nil
	case DetailFull:
		return m, nil
	}
	return nil, fmt.Errorf("memstore: unknown detail level %q (want light, medium or full)", detail)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
