package extract

import (
	"bufio"
	"errors"
	"io"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/structq"
)

// structuredRequest makes req run the question s (lro_extract's where,
// select, sort, limit, aggregate and group_by) as a recipe runs: a
// trusted program, kept compiled, over the slurped records, the question
// bound as a variable. It returns the variable's values. What the answer
// carries of records or groups is bounded below req's output cap, so that
// a long list is cut whole items at a time, with the cut said; each value
// an item shows to a sixteenth of the cap (about a quarter of the
// threshold's bytes), and a single aggregate's value to the bound, so
// that no answer exceeds the cap (which would leave it empty).
func structuredRequest(s *structq.Spec, req *extractworker.Request) []any {
	s.Budget = req.Limits.MaxOutputBytes * 3 / 4
	s.ValueBytes = req.Limits.MaxOutputBytes / 16
	req.Query, req.Trusted, req.Slurp = s.Program(), true, true
	req.Vars = []string{structq.Var}
	return []any{s.Value()}
}

// structuredAnswer renders the engine's answer to the question s, at most
// the threshold's worth. A field no record has is an error that lists
// the fields the first records of f have.
func (o *Tool) structuredAnswer(s *structq.Spec, resp *extractworker.Response, f *offloadFile) (string, error) {
	return answerQuestion(s, resp, o.env.ThresholdTokens, o.EstimateTokens, func() (io.ReadCloser, error) { return o.fromStart(f) })
}

// answerQuestion is structuredAnswer given the threshold, the estimator,
// and a way to read the file from its first byte.
func answerQuestion(s *structq.Spec, resp *extractworker.Response, threshold int, estimate func([]byte) int, open func() (io.ReadCloser, error)) (string, error) {
	text, err := s.Answer(resp.Values, threshold, estimate)
	var fe *structq.FieldsError
	if errors.As(err, &fe) {
		fe.Shape = readShape(open)
	}
	return text, err
}

// maxShapeBytes bounds what a FieldsError reads of the records to list
// their fields: the error is the model's next step, and a millisecond's
// read.
const maxShapeBytes = 1 << 20

// readShape reads the shape of the first records of the file open
// reads, past its header line; nil when it cannot be read.
func readShape(open func() (io.ReadCloser, error)) *structq.Shape {
	src, err := open()
	if err != nil {
		return nil
	}
	defer src.Close()
	r := bufio.NewReaderSize(io.LimitReader(src, maxHeaderBytes+maxShapeBytes), headerBuffer)
	for {
		_, err := r.ReadSlice('\n')
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			return nil
		}
	}
	return structq.ReadShape(io.LimitReader(r, maxShapeBytes))
}
