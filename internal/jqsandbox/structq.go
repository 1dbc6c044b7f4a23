package jqsandbox

import (
	"context"
	"errors"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro/internal/structq"
)

// structqOption defines structq.FuncName for trusted programs: Apply,
// which answers lro_extract's structured questions over the tuples the
// program made of the records (see package structq). It stops with the
// run's cause when the run is canceled (deadline, heap watchdog).
func structqOption() gojq.CompilerOption {
	return gojq.WithFunction(structq.FuncName, 1, 1, func(v any, args []any) any {
		rows, ok := v.([]any)
		if !ok {
			return errors.New(structq.FuncName + ": the input is not the array of records (run it in slurp mode)")
		}
		st := current()
		out, err := structq.Apply(rows, args[0], func() error {
			if st.ctx.Err() != nil {
				return context.Cause(st.ctx)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return out
	})
}
