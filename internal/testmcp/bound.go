package testmcp

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
)

// An Answer is what a client received of a tool call, as the bound
// counts it: the texts of text items and embedded text resources, the
// resource links (their URI, name, description and MIME type), the
// structured content and the _meta as JSON.
type Answer struct {
	IsError    bool
	Texts      []string
	Links      []string
	Structured []byte
	Meta       []byte
}

// AnswerOf is what a client reads of res, an mcp-go result.
func AnswerOf(res *mcp.CallToolResult) Answer {
	a := Answer{IsError: res.IsError}
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			a.Texts = append(a.Texts, c.Text)
		case mcp.EmbeddedResource:
			if tr, ok := c.Resource.(mcp.TextResourceContents); ok {
				a.Texts = append(a.Texts, tr.Text)
			}
		case mcp.ResourceLink:
			a.Links = append(a.Links, c.URI+c.Name+c.Description+c.MIMEType)
		}
	}
	if res.StructuredContent != nil {
		a.Structured, _ = json.Marshal(res.StructuredContent)
	}
	if res.Meta != nil {
		a.Meta, _ = json.Marshal(res.Meta)
	}
	return a
}

// Tokens is what a client received, as o estimates it: the structured
// content counted once when a text is its serialization, a resource link
// as its fields and their names, the _meta with its member's name. Items
// with no text (images, audio, binary resources), which the gate keeps as
// they are, are not counted. The bound of every answer lro judges is
// o's ThresholdTokens + lro.NoticeTokens of these.
func (a Answer) Tokens(o *lro.Offloader) int {
	tokens, repeated := 0, false
	for _, l := range a.Links {
		tokens += o.EstimateTokens([]byte(l)) + 16
	}
	for _, s := range a.Texts {
		tokens += o.EstimateTokens([]byte(s))
		repeated = repeated || len(a.Structured) > 0 && SameJSONText(s, a.Structured)
	}
	if len(a.Structured) > 0 && string(a.Structured) != "null" && !repeated {
		tokens += o.EstimateTokens(a.Structured)
	}
	if len(a.Meta) > 0 && string(a.Meta) != "null" {
		tokens += o.EstimateTokens(a.Meta) + 4 // and its member's name
	}
	return tokens
}

// Bytes is the size of a's texts, structured content and _meta.
func (a Answer) Bytes() int {
	size := len(a.Structured) + len(a.Meta)
	for _, s := range a.Texts {
		size += len(s)
	}
	return size
}

// SameJSONText reports whether s and b are the same JSON value.
func SameJSONText(s string, b []byte) bool {
	var x, y any
	return json.Unmarshal([]byte(s), &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}
