package memserver

import (
	"context"
	"fmt"
)

const (
	exportLimit    = 500    // memories export_memories returns by default
	maxExportLimit = 100000 // the largest limit it accepts
)

// exportResult is the output of export_memories. Both SDKs infer the
// tool's output schema from it, and send it as the structured content and,
// encoded, as the text.
type exportResult struct {
	Count    int   `json:"count" jsonschema:"the number of memories exported"`
	Memories []any `json:"memories" jsonschema:"the memories, newest first, at the requested detail"`
}

// exportTool is the server's typed tool: a tool with an output schema.
var exportTool = typedTool[exportResult]{
	name: "export_memories",
	description: `Export memories, newest first, at the requested detail. Returns {"count", "memories"}, as the tool's output schema states: ` +
		`the number of memories and the memories themselves, shaped as recall_memories shapes them.`,
	schema: memorySchema(props{
		"limit": {"number", fmt.Sprintf("How many memories to export (default %d, at most %d); a limit past the size of the store exports all of it.", exportLimit, maxExportLimit), exportLimit},
	}),
	run: tools.export,
}

func (t tools) export(_ context.Context, args map[string]any) (exportResult, error) {
	limit, err := intArg(args, "limit", exportLimit, 1, maxExportLimit)
	if err != nil {
		return exportResult{}, err
	}
	detail, err := detailOf(args, "light")
	if err != nil {
		return exportResult{}, err
	}
	mems, _ := t.store.List("", 0, limit)
	return exportResult{Count: len(mems), Memories: project(mems, detail)}, nil
}
