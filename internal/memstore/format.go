package memstore

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// FormatContext renders hits as plain text for injection into a prompt,
// in hit order, one section per memory. It adds whole memories only while
// the estimated size (runes/4, rounded up) of the whole block stays within
// tokenBudget, stopping at the first one that does not fit so rank order
// is never reshuffled; tokenBudget <= 0 means no limit. Light sections
// carry title and metadata, medium adds content, full adds summary, dates
// and confidence. Unknown detail levels render as medium because this
// function has no error path and medium is the useful default.
func FormatContext(hits []Hit, detail string, tokenBudget int) string {
	var out strings.Builder
	runes := 0
	for _, h := range hits {
		if h.Memory == nil {
			continue
		}
		sec := section(h, detail)
		if out.Len() > 0 {
			sec = "\n" + sec
		}
		n := utf8.RuneCountInString(sec)
		if tokenBudget > 0 && estimateTokens(runes+n) > tokenBudget {
			break
		}
		out.WriteString(sec)
		runes += n
	}
	return out.String()
}

// estimateTokens is the chars/4 heuristic the budget is measured in.
func estimateTokens(runes int) int {
	return (max(runes, 0) + 3) / 4
}

func section(h Hit, detail string) string {
	m := h.Memory
	var b strings.Builder
	b.WriteString("## ")
	b.WriteString(m.Title)
	b.WriteString("\nnamespace: ")
	b.WriteString(m.Namespace)
	b.WriteString(" | type: ")
	b.WriteString(m.MemoryType)
	b.WriteString(" | relevance: ")
	b.WriteString(strconv.FormatFloat(h.Score, 'f', 2, 64))
	if len(m.Tags) > 0 {
		b.WriteString(" | tags: ")
		b.WriteString(strings.Join(m.Tags, ", "))
	}
	b.WriteByte('\n')
	if detail == DetailLight {
		return b.String()
	}
	if detail == DetailFull {
		b.WriteString("created: ")
		b.WriteString(m.Created)
		b.WriteString(" | modified: ")
		b.WriteString(m.Modified)
		b.WriteString(" | confidence: ")
		b.WriteString(strconv.FormatFloat(m.Provenance.Confidence, 'f', 2, 64))
		b.WriteByte('\n')
	}
	b.WriteString(m.Content)
	b.WriteByte('\n')
	if detail == DetailFull && m.Summary != "" {
		b.WriteString("Summary: ")
		b.WriteString(m.Summary)
		b.WriteByte('\n')
	}
	return b.String()
}
