package extract

import (
	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/structq"
)

// structuredRequest makes req run the question s (lro_extract's where,
// select, sort, limit, aggregate and group_by) as a recipe runs: a
// trusted program, kept compiled, over the slurped records, the question
// bound as a variable. It returns the variable's values. What the answer
// carries of records or groups is bounded below req's output cap, so that
// a long list is cut whole items at a time, with the cut said.
func structuredRequest(s *structq.Spec, req *extractworker.Request) []any {
	s.Budget = req.Limits.MaxOutputBytes * 3 / 4
	req.Query, req.Trusted, req.Slurp = s.Program(), true, true
	req.Vars = []string{structq.Var}
	return []any{s.Value()}
}

// structuredAnswer renders the engine's answer to the question s, at most
// the threshold's worth.
func (o *Tool) structuredAnswer(s *structq.Spec, resp *extractworker.Response) (string, error) {
	return s.Answer(resp.Values, o.env.ThresholdTokens, o.EstimateTokens)
}
