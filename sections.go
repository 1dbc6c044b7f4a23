package lro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
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
func (o *Offloader) sectionSets(base ResultSet, l *layout, tokens, beside int, policy ToolPolicy, tool string) []ResultSet {
	sets := make([]ResultSet, len(l.sections))
	for i := range l.sections {
		s := &l.sections[i]
		set := base
		set.src, set.Validated = s.src, true
		set.Generic = policy.Generic || s.generic || (policy.detect || i > 0) && !looksLikeMemories(s.src)
		if policy.detect && set.Generic {
			set.Operation = o.genericFallback(tool)
		}
		if i > 0 {
			set.Operation = ToolPolicy{}.operationFor(set.Operation + "_" + s.name())
			set.Query = nil
		}
		sets[i] = set
	}
	sets[0].Extra = l.extra
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

// offloadSections writes each set to its own file, all or none, and
// describes them in one descriptor: the first set's, listing the others.
// A set of one is [Offloader.Offload]. beside is as for sectionSets.
func (o *Offloader) offloadSections(ctx context.Context, sets []ResultSet, l *layout, beside int) (Outcome, error) {
	if len(sets) == 1 {
		out, err := o.Offload(ctx, sets[0])
		switch {
		case err != nil:
		case out.Action == Truncated:
			out.kept = []int{out.Kept}
		case out.Action == Offloaded && sets[0].Generic:
			// Memories keep to the specification's descriptor: their
			// field ("results") says nothing a model needs.
			out.Response.Section = l.sections[0].name()
		}
		return out, err
	}
	total, count := 0, 0
	for _, s := range sets {
		total += s.Tokens
		count += s.count()
	}
	if o.closed.Load() {
		return Outcome{}, ErrClosed
	}
	for _, s := range sets {
		if err := checkName(s.Operation); err != nil {
			return Outcome{}, fmt.Errorf("lro: invalid operation %q: %v", s.Operation, err)
		}
	}
	// The caller has judged the whole result against the threshold.
	start := time.Now()
	files := make([]written, 0, len(sets))
	for _, s := range sets {
		w, err := o.writeFile(ctx, s, s.Tokens, start)
		if err != nil {
			// All or none: a descriptor never points at half a result.
			for _, f := range files {
				if rerr := o.removeWritten(f); rerr != nil {
					err = errors.Join(err, fmt.Errorf("removing %s: %w", f.name, rerr))
				}
			}
			var recErr *RecordError
			if errors.As(err, &recErr) {
				return Outcome{}, err
			}
			return o.fallbackSections(ctx, sets, l, beside, total, count, w.path, err), nil
		}
		files = append(files, w)
	}
	resp := o.describe(ctx, sets[0], total, files[0])
	resp.Section = l.sections[0].name()
	for i := 1; i < len(sets); i++ {
		d := SectionDescriptor{Section: l.sections[i].name(), Count: sets[i].count(), FilePath: files[i].path}
		if i <= describedSections {
			d.LineSchema, d.JQRecipes = o.sectionRecipes(sets[i], files[i])
		}
		resp.Sections = append(resp.Sections, d)
	}
	if resp.Section != "" || len(resp.Sections) > 0 {
		resp.Guidance = o.guidanceFor(ctx, sets[0], total, files[0], resp.Section, len(resp.Sections))
	}
	for i, f := range files {
		o.emitOffloaded(ctx, OffloadEvent{
			Operation: sets[i].Operation,
			Path:      f.path,
			Count:     sets[i].count(),
			Tokens:    sets[i].Tokens,
			Bytes:     f.bytes,
			Duration:  time.Since(start),
		})
	}
	out := Outcome{Action: Offloaded, Tokens: total, Response: resp}
	for i, f := range files {
		out.files = append(out.files, offloadedFile{f.path, f.bytes, isLines(sets[i])})
	}
	return out, nil
}

// sectionRecipes returns the line schema and first recipes of a section
// other than the first.
func (o *Offloader) sectionRecipes(set ResultSet, w written) (json.RawMessage, []JQRecipe) {
	schema, recipes := o.schemaAndRecipes(set, w.stats)
	return schema, shellRecipes(recipes[:min(len(recipes), sectionRecipes)], w.path)
}

// refuse is the fallback of sets that are not to be written at all, for
// the reason err.
func (o *Offloader) refuse(ctx context.Context, sets []ResultSet, l *layout, beside int, err error) Outcome {
	tokens, count := 0, 0
	for _, s := range sets {
		tokens += s.Tokens
		count += s.count()
	}
	return o.fallbackSections(ctx, sets, l, beside, tokens, count, "", err)
}

// fallbackSections keeps, of each section, as many leading records as fit
// the threshold together.
func (o *Offloader) fallbackSections(ctx context.Context, sets []ResultSet, l *layout, beside, tokens, count int, path string, err error) Outcome {
	// The warning goes with the records: sized as in fallback.
	kept := o.fit(l, beside+o.EstimateTokens([]byte(o.fallbackWarning(err, count, count))))
	n := 0
	for _, k := range kept {
		n += k
	}
	warning := o.fallbackWarning(err, n, count)
	o.emitWriteFailed(ctx, WriteFailedEvent{
		Operation: sets[0].Operation,
		Path:      path,
		Count:     count,
		Kept:      n,
		Tokens:    tokens,
		Err:       err,
	})
	return Outcome{Action: Truncated, Tokens: tokens, Kept: n, Warning: warning, Err: err, kept: kept}
}
