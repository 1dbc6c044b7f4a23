package lro

import (
	"context"
	"encoding/json"

	"github.com/mcplro/lro/internal/records"
)

// SectionDescriptor describes one more large field of a result that had
// several: its records are in a file of their own, next to the one
// [OffloadResponse.FilePath] names.
type SectionDescriptor struct {
	Section  string `json:"section"`   // the field's path in the result: "edges", "data.items"
	Count    int    `json:"count"`     // records in the file
	FilePath string `json:"file_path"` // absolute path of the JSONL file
	// LineSchema is the JSON Schema of one record line, and JQRecipes the
	// first recipes of the section's own ten (browse, count, one that uses
	// its fields; lro_extract runs all ten). Only the largest sections
	// carry them, so that the descriptor stays small.
	LineSchema json.RawMessage `json:"line_schema,omitempty"`
	JQRecipes  []JQRecipe      `json:"jq_recipes,omitempty"`
}

// The descriptor stays compact however many sections there are: a section
// other than the first lists sectionRecipes recipes, and only the
// describedSections largest list a schema and recipes at all; the others
// have their count and path (lro_extract infers their recipes from the
// file as it does for any).
const (
	sectionRecipes    = 3
	describedSections = 3
)

// sectionSets makes one result set of each section of l: the first under
// the call's operation, the others under the operation and their path.
// beside is the estimate of what the result sends next to the sets (small
// texts kept inline), which an inline fallback must leave room for.
func (o *Offloader) sectionSets(base ResultSet, l *records.Layout, tokens, beside int, policy ToolPolicy, tool string) []ResultSet {
	sets := make([]ResultSet, len(l.Sections))
	for i := range l.Sections {
		s := &l.Sections[i]
		set := base
		set.src, set.Validated = s.Src, true
		set.Generic = policy.Generic || s.Generic || (policy.detect || i > 0) && !looksLikeMemories(s.Src)
		if policy.search && set.Generic {
			set.Operation = o.genericFallback(tool)
		}
		if i > 0 {
			set.Operation = ToolPolicy{}.operationFor(set.Operation + "_" + s.Name())
			set.Query = nil
		}
		sets[i] = set
	}
	sets[0].Extra = l.Extra
	if len(sets) == 1 {
		// The whole result's estimate, and what the inline fallback sends.
		sets[0].Tokens = tokens
		sets[0].beside, sets[0].doc = beside, l
		return sets
	}
	for i := range sets {
		sets[i].Tokens = o.estimateRecords(sets[i].source())
	}
	return sets
}

// describeSections makes resp, the descriptor of sets[0], that of the
// whole result l was laid out from: it names the field sets[0] holds, and
// lists the other sections and their files. Memories alone keep to the
// specification's descriptor: their field ("results") says nothing a
// model needs.
func (o *Offloader) describeSections(ctx context.Context, resp *OffloadResponse, sets []ResultSet, l *records.Layout, total int, files []written) {
	if len(sets) == 1 {
		if sets[0].Generic {
			resp.Section = l.Sections[0].Name()
		}
		return
	}
	resp.Section = l.Sections[0].Name()
	for i := 1; i < len(sets); i++ {
		d := SectionDescriptor{Section: l.Sections[i].Name(), Count: sets[i].count(), FilePath: files[i].path}
		if i <= describedSections {
			d.LineSchema, d.JQRecipes = o.sectionRecipes(sets[i], files[i])
		}
		resp.Sections = append(resp.Sections, d)
	}
	resp.Guidance = o.guidanceFor(ctx, sets[0], total, files[0], resp.Section, len(resp.Sections))
}

// sectionRecipes returns the line schema and first recipes of a section
// other than the first.
func (o *Offloader) sectionRecipes(set ResultSet, w written) (json.RawMessage, []JQRecipe) {
	schema, recipes := o.schemaAndRecipes(set, w.stats)
	return schema, shellRecipes(recipes[:min(len(recipes), sectionRecipes)], w.path)
}

// fit returns how many leading records of each section the inline
// fallback keeps: what the document sends besides the sections comes
// first, and the rest of the threshold is shared between the sections in
// proportion to their size.
func (o *Offloader) fit(l *records.Layout, extraTokens int) []int {
	kept := make([]int, len(l.Sections))
	budget := o.cfg.ThresholdTokens - extraTokens
	if !l.Items {
		budget -= o.EstimateTokens(l.Truncated(kept))
	}
	total := 0
	for _, s := range l.Sections {
		total += max(s.Bytes, 1)
	}
	for i, s := range l.Sections {
		share := budget
		if len(l.Sections) > 1 {
			share = int(int64(budget) * int64(max(s.Bytes, 1)) / int64(total))
		}
		kept[i] = o.leading(s.Src, share)
	}
	return kept
}
