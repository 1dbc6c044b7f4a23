package lro

import "github.com/mcplro/lro/internal/textlines"

// Offloaded files read as lines of text (lro_extract's grep and lines
// modes, resources/read of a range) go through internal/textlines, which
// a worker process runs too; these names keep this package's code short.
type (
	lineRange  = textlines.Range
	textLimits = textlines.Limits
	grepQuery  = textlines.Query
)

const (
	textBufSize   = textlines.BufSize
	minTextBudget = textlines.MinBudget
)

func parseLineRange(s string) (lineRange, error) { return textlines.ParseRange(s) }

var (
	readLines = textlines.ReadLines
	grepLines = textlines.Grep
)
