package lro_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/require"
)

// The kinds of a content item FuzzGate's results hold, one byte of kinds
// an item (its low three bits); 0x08 makes a resource's uri empty.
const (
	gateText = iota
	gateImage
	gateAudio
	gateResource     // an embedded text resource
	gateResourceBlob // an embedded resource of text and a blob
	gateBlob         // an embedded binary resource
	gateLink         // a resource_link of the server's
	gateText2        // text again: the usual item
	gateNoURI        = 0x08
)

// Bits of FuzzGate's flags.
const (
	gateIsError    = 1 << 0
	gateNeedsInput = 1 << 1
	gateModes      = 3 << 2 // the delivery mode: descriptor, compact, truncate, descriptor
	gateStructured = 1 << 4 // structured is the structured content, when it is JSON
	gateMetaJSON   = 1 << 5 // structured is the _meta, when it is a JSON object
	gateStream     = 1 << 6 // the handler streams reps records to lro.CollectSeq
)

// gateMaxBytes bounds the texts of one fuzzed result: a few hundred KB.
const gateMaxBytes = 400 << 10

// gateSep separates the texts of FuzzGate's texts: the n-th item with a
// text takes the n-th (cycling), repeated reps times.
const gateSep = "\x1e"

// FuzzGate drives MCP results of random shape through Host.Serve, the
// seam every adapter calls: content items of every type (text, image,
// audio, embedded resources of text, of text and a blob, of a blob,
// resource links), uris empty or not, a _meta of any size, structured
// content, tool errors and requests for input, texts up to a few hundred
// KB, in each delivery mode. Whatever the result, the call returns
// without a panic or an error, what a client receives is within
// ThresholdTokens + NoticeTokens as the Offloader counts it (assertBound:
// items with no text, which the gate keeps as they are, are not counted),
// and no value shown is changed (checkUnchanged). Its seeds are the shapes
// of the bound matrix.
//
//	go test -run '^$' -fuzz FuzzGate -fuzztime 3m .
func FuzzGate(f *testing.F) {
	for _, sh := range boundShapes(f) {
		if seed, ok := gateSeed(sh.result); ok {
			for mode := range 3 {
				f.Add(seed.kinds, seed.texts, seed.reps, seed.metaSize, seed.structured, seed.flags|byte(mode<<2))
			}
		}
	}
	f.Add([]byte{gateImage, gateAudio, gateBlob, gateLink}, "", uint16(1), uint32(300000), []byte(nil), byte(0))
	f.Add([]byte{gateResourceBlob | gateNoURI, gateText}, "x"+gateSep+"{\"a\":[1,2,3]}", uint16(20000), uint32(0), []byte(`{"m":1}`), byte(gateMetaJSON|gateIsError))
	f.Add([]byte{gateText}, "ok", uint16(5000), uint32(0), []byte(`[{"id":1,"title":"a ticket"}]`), byte(gateStructured|gateNeedsInput))
	f.Add(bytes.Repeat([]byte{gateText, gateResource | gateNoURI}, 8), "line\n", uint16(9000), uint32(1000), []byte(`{"k":{"k":{"k":[1]}}}`), byte(gateMetaJSON))

	offs := make([]*lro.Offloader, 3)
	for i, mode := range []lro.Delivery{lro.DeliveryDescriptor, lro.DeliveryCompact, lro.DeliveryTruncate} {
		// The store is in memory, and its quota evicts the oldest files:
		// a long run holds at most 64 MiB of them.
		offs[i] = newOffloader(f, func(c *lro.Config) {
			c.Delivery = mode
			c.MaxDirBytes = 64 << 20
		}, lro.WithFS(lrotest.NewMemFS("/lro")), lro.WithoutBuiltinTools(), lro.WithoutJanitor(), lro.WithTool("t", lro.ToolPolicy{Generic: true}))
	}
	f.Fuzz(func(t *testing.T, kinds []byte, texts string, reps uint16, metaSize uint32, structured []byte, flags byte) {
		o := offs[min(int(flags&gateModes>>2), 3)%3]
		r, res := gateResult(kinds, texts, reps, metaSize, structured, flags)
		a := gateAnswer(t, o, r, res)
		assertBound(t, o, a, fmt.Sprintf("%d items, %d bytes of texts", len(res.Content), gateTextBytes(res)))
		checkUnchanged(t, r, a)
	})
}

// gateSeed is a shape of the bound matrix as FuzzGate's arguments; false
// for a shape no handler of Host.Serve returns (a server's raw answer, a
// JSON-RPC error).
func gateSeed(r boundResult) (seed struct {
	kinds      []byte
	texts      string
	reps       uint16
	metaSize   uint32
	structured []byte
	flags      byte
}, ok bool) {
	if r.wire != "" || r.goErr != "" {
		return seed, false
	}
	seed.reps = 1
	if r.image {
		seed.kinds = append(seed.kinds, gateImage)
	}
	parts := []string{}
	for _, s := range r.texts {
		seed.kinds = append(seed.kinds, gateText)
		parts = append(parts, s)
	}
	if r.resource != "" {
		k := byte(gateResource)
		if r.blob {
			k = gateResourceBlob
		}
		if r.noURI {
			k |= gateNoURI
		}
		seed.kinds = append(seed.kinds, k)
		parts = append(parts, r.resource)
	}
	seed.texts = strings.Join(parts, gateSep)
	if trace, ok := r.meta["trace"].(string); ok {
		seed.metaSize = uint32(len(trace))
	}
	if r.structured != nil {
		seed.structured, seed.flags = r.structured, seed.flags|gateStructured
	}
	if r.isError {
		seed.flags |= gateIsError
	}
	if r.needsInput {
		seed.flags |= gateNeedsInput
	}
	if r.stream > 0 {
		seed.reps, seed.flags = uint16(r.stream), seed.flags|gateStream
	}
	return seed, true
}

// gateResult is the result FuzzGate's arguments describe, host-neutral,
// and as a boundResult for checkUnchanged: its texts are every text the
// result holds.
func gateResult(kinds []byte, texts string, reps uint16, metaSize uint32, structured []byte, flags byte) (boundResult, host.Result) {
	kinds = kinds[:min(len(kinds), 16)]
	parts := strings.Split(texts, gateSep)
	n := 0 // items with a text
	for _, k := range kinds {
		switch k & 7 {
		case gateText, gateText2, gateResource, gateResourceBlob:
			n++
		}
	}
	each := gateMaxBytes / max(n, 1)
	r := boundResult{isError: flags&gateIsError != 0, needsInput: flags&gateNeedsInput != 0}
	res := host.Result{IsError: r.isError, NeedsInput: r.needsInput}
	if len(kinds) == 0 {
		r.noContent = true
	}
	i := 0
	next := func() string {
		p := parts[i%len(parts)]
		i++
		if len(p)*max(int(reps), 1) > each {
			return strings.Repeat(p, each/max(len(p), 1)+1)[:each]
		}
		return strings.Repeat(p, max(int(reps), 1))
	}
	for _, k := range kinds {
		uri := "file:///r.json"
		if k&gateNoURI != 0 {
			uri = ""
		}
		switch k & 7 {
		case gateText, gateText2:
			s := next()
			r.texts = append(r.texts, s)
			res.Content = append(res.Content, host.TextContent(s))
		case gateImage:
			res.Content = append(res.Content, host.Content{Other: "an image"})
		case gateAudio:
			res.Content = append(res.Content, host.Content{Other: "audio"})
		case gateResource, gateResourceBlob:
			s := next()
			r.texts = append(r.texts, s)
			res.Content = append(res.Content, host.Content{Text: s, URI: uri, Other: "a resource"})
		case gateBlob:
			res.Content = append(res.Content, host.Content{Other: "a binary resource"})
		case gateLink:
			res.Content = append(res.Content, host.Content{Other: "a resource link"})
		}
	}
	if flags&gateStructured != 0 && json.Valid(structured) {
		r.structured = json.RawMessage(gateRepeated(structured, int(reps)))
		res.Structured = r.structured
	}
	var obj map[string]any
	switch {
	case flags&gateMetaJSON != 0 && json.Unmarshal(structured, &obj) == nil && obj != nil:
		res.Meta = json.RawMessage(structured)
	case metaSize%gateMaxBytes > 0:
		res.Meta = map[string]any{"trace": strings.Repeat("m", int(metaSize%gateMaxBytes))}
	}
	if flags&gateStream != 0 {
		r.stream = int(reps % 3000)
	}
	return r, res
}

// gateRepeated is s, JSON, with the elements of an array repeated reps
// times, within gateMaxBytes: structured content of a few hundred KB.
func gateRepeated(s []byte, reps int) []byte {
	inner := bytes.TrimSpace(s)
	if reps < 2 || len(inner) < 3 || inner[0] != '[' || inner[len(inner)-1] != ']' {
		return s
	}
	inner = bytes.TrimSpace(inner[1 : len(inner)-1])
	if len(inner) == 0 {
		return s
	}
	n := min(reps, gateMaxBytes/(len(inner)+1))
	out := append(make([]byte, 0, n*(len(inner)+1)+1), '[')
	for i := range max(n, 1) {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, inner...)
	}
	return append(out, ']')
}

// gateTextBytes is the size of res's texts.
func gateTextBytes(res host.Result) int {
	n := 0
	for _, c := range res.Content {
		n += len(c.Text)
	}
	return n
}

// gateAnswer serves res (or, for a streamed result, r's records) through
// Host.Serve, and returns what a client receives of it: the texts of
// every item the gate judges, lro's links, the structured content and
// the _meta.
func gateAnswer(t *testing.T, o *lro.Offloader, r boundResult, res host.Result) boundAnswer {
	orig := res
	out, replaced, err := o.Host().Serve(context.Background(), host.Call{Tool: "t"}, func(ctx context.Context) (host.Result, error) {
		if r.stream == 0 {
			return res, nil
		}
		s := r.collect(ctx)
		orig.Content = nil
		for _, text := range s.texts {
			orig.Content = append(orig.Content, host.TextContent(text))
		}
		orig.IsError = s.isError
		return orig, nil
	})
	require.NoError(t, err, "the call returns")
	if !replaced {
		out = orig
	}
	a := boundAnswer{isError: out.IsError}
	for _, c := range out.Content {
		switch {
		case c.Link != nil:
			a.links = append(a.links, c.Link.URI+c.Link.Name+c.Link.Description+c.Link.MIMEType)
		case c.Judged() && c.Text != "": // an empty text shows no value
			a.texts = append(a.texts, asReceived(c.Text)) // as JSON carries it
		}
	}
	if out.Structured != nil {
		a.structured, _ = json.Marshal(out.Structured)
	}
	if out.Meta != nil {
		a.meta, _ = json.Marshal(out.Meta)
	}
	return a
}
