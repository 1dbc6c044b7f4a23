package lro

import (
	"fmt"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/adapt"
	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/jsonscan"
)

// The arguments of a call that lro reads. Every argument reaches the
// handler as the client sent it: wiring lro in changes no tool's contract.
// lro reads detail, the level its file is written at, unless the tool's
// input schema declares a detail of its own and the value is not one of
// lro's levels; and a page size, to name one that fits in the answer to a
// page too large to send (see pageError).

// detailOf returns the detail level lro judges call at under policy, or
// the tool error for a detail argument that is neither one of lro's
// levels nor the tool's own.
func detailOf(call host.Call, policy ToolPolicy) (Detail, *host.Result) {
	detail := policy.DefaultDetail
	if detail == "" {
		detail = DetailLight
	}
	v, present := call.Arguments["detail"]
	if !present || v == nil || policy.Generic {
		return detail, nil
	}
	s, _ := v.(string)
	if d, err := ParseDetail(s); err == nil {
		return d, nil
	}
	if policy.search || declares(call, "detail") {
		// The tool's own ("brief"): its records are judged at the
		// policy's level, and the handler reads the argument as sent.
		return detail, nil
	}
	msg := fmt.Sprintf("%s: invalid detail %s: want \"light\", \"medium\" or \"full\"", call.Tool, extract.EchoJSON(v))
	return detail, &host.Result{IsError: true, Content: []host.Content{host.TextContent(msg)}}
}

// declares reports whether the input schema of call's tool declares the
// top-level property name. An unknown schema declares nothing.
func declares(call host.Call, name string) bool {
	if call.InputSchema == nil {
		return false
	}
	schema := call.InputSchema()
	found := false
	_ = jsonscan.Fields(schema, func(f jsonscan.Field) bool {
		if string(f.Key) != "properties" {
			return true
		}
		_ = jsonscan.Fields(f.Value, func(p jsonscan.Field) bool {
			found = string(p.Key) == name
			return !found
		})
		return false
	})
	return found
}

// pageSizeArgument returns the name of call's page-size argument: the
// first of adapt.PageSizes the call gives as a number, or else the
// first its tool's input schema declares; "" when there is none.
func pageSizeArgument(call host.Call) string {
	for _, name := range adapt.PageSizes {
		if _, ok := call.Arguments[name].(float64); ok {
			return name
		}
	}
	for _, name := range adapt.PageSizes {
		if declares(call, name) {
			return name
		}
	}
	return ""
}

// pageSize returns the page size call asks for, or 0 when it gives none.
func pageSize(call host.Call) int {
	for _, name := range adapt.PageSizes {
		if n, ok := call.Arguments[name].(float64); ok && n >= 1 && n <= 1<<31 {
			return int(n)
		}
	}
	return 0
}
