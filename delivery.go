package lro

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/mcplro/lro/host"
)

// Delivery is how an offloaded result reaches the model.
type Delivery string

// The delivery modes.
const (
	// DeliveryDescriptor sends the specification's OffloadResponse: every
	// field, ten recipes. It is the default.
	DeliveryDescriptor Delivery = "descriptor"
	// DeliveryCompact sends a bare pointer and what a model needs to act
	// on it (a [CompactResponse]), with a short preview of the records.
	DeliveryCompact Delivery = "compact"
	// DeliveryTruncate writes no file: whole records go inline, with a
	// notice of how many were left out and how to narrow the call, as
	// many as fit the threshold together with the notice. It is for
	// clients that can follow nothing.
	DeliveryTruncate Delivery = "truncate"
)

// A deliveryMode is what one [Delivery] does with a result over the
// threshold (or over the session budget): each mode is a value of its own
// file, registered in deliveryModes, and the pipeline asks the call's mode
// instead of testing which one it is.
type deliveryMode interface {
	// outcome judges the result s: a file and its descriptor, records cut
	// inline, or Inline.
	outcome(ctx context.Context, o *engine, s *subject) (Outcome, error)
	// pointer is what the answer carries in place of the records of an
	// offloaded result, whose descriptor is r; linked says resource links
	// go with it.
	pointer(o *engine, r *OffloadResponse, rp reply, linked bool) any
	// pointerTokens is about the size of that pointer: a result no larger
	// stays inline under the session budget, since offloading it would
	// save nothing.
	pointerTokens(o *engine) int
	// previewTokens is the preview budget when the choice leaves it 0.
	previewTokens() int
}

// deliveryModes are the modes, in the order ParseDelivery names them: a
// new mode is a file with its deliveryMode and one line here.
var deliveryModes = []struct {
	name Delivery
	mode deliveryMode
}{
	{DeliveryDescriptor, descriptorMode{}},
	{DeliveryCompact, compactMode{}},
	{DeliveryTruncate, truncateMode{}},
}

// modeOf returns the mode named d, or nil.
func modeOf(d Delivery) deliveryMode {
	for _, m := range deliveryModes {
		if m.name == d {
			return m.mode
		}
	}
	return nil
}

// ParseDelivery parses "descriptor", "compact" or "truncate".
func ParseDelivery(s string) (Delivery, error) {
	if modeOf(Delivery(s)) != nil {
		return Delivery(s), nil
	}
	names := make([]string, len(deliveryModes))
	for i, m := range deliveryModes {
		names[i] = strconv.Quote(string(m.name))
	}
	last := len(names) - 1
	return "", fmt.Errorf("lro: unknown delivery %q: want %s or %s", s, strings.Join(names[:last], ", "), names[last])
}

// A DeliveryRequest is what a [WithDelivery] function chooses from: the
// tool, the client, and what the server offers to follow a file with.
type DeliveryRequest struct {
	Tool   string
	Client host.ClientInfo
	// NativeExtract says the server serves lro_extract.
	NativeExtract bool
	// Resources says the server answers resources/read for offloaded
	// files, so that a resource link can be followed.
	Resources bool
	// Default is Config.Delivery.
	Default Delivery
}

// DeliveryChoice is how one offloaded result is delivered.
type DeliveryChoice struct {
	// Mode is the delivery mode; empty means Config.Delivery.
	Mode Delivery
	// PreviewTokens is the budget of the preview that rides along with
	// a file's pointer: the first records, as many as fit. 0 means the
	// mode's default (DefaultPreviewTokens for compact, none for
	// descriptor); negative means none. Truncate ignores it.
	PreviewTokens int
}

// WantsClientCapabilities reports whether a host adapter should fill
// Call.Client.Capabilities: only a [WithDelivery] function reads them, and
// encoding them on every call would cost for nothing.
func (h Host) WantsClientCapabilities() bool { return h.o.opts.delivery != nil }

// A delivery is the delivery of one call, decided once: its mode and
// the preview budget.
type delivery struct {
	mode    deliveryMode
	preview int
}

// A callDelivery is the delivery of a call's result, decided the first
// time it is needed and then the same: WithDelivery's function runs once
// a call, and only for a result over the threshold or the session budget
// (the budget may ask before the result is judged).
type callDelivery struct {
	o    *engine
	call host.Call
	once sync.Once
	d    delivery
}

// get returns the call's delivery, deciding it on first use.
func (c *callDelivery) get() delivery {
	c.once.Do(func() { c.d = c.o.deliveryFor(c.call) })
	return c.d
}

// deliveryFor chooses the delivery of an offloaded result of call.
func (o *engine) deliveryFor(call host.Call) delivery {
	c := DeliveryChoice{Mode: o.cfg.Delivery}
	if choose := o.opts.delivery; choose != nil {
		got := choose(DeliveryRequest{Tool: call.Tool, Client: call.Client, NativeExtract: call.NativeExtract, Resources: call.Resources, Default: o.cfg.Delivery})
		if modeOf(got.Mode) != nil {
			c.Mode = got.Mode
		}
		c.PreviewTokens = got.PreviewTokens
	}
	mode := modeOf(c.Mode)
	if mode == nil { // Config.Validate refuses it: never, but never a nil mode either
		mode = descriptorMode{}
	}
	if c.PreviewTokens == 0 {
		c.PreviewTokens = mode.previewTokens()
	}
	return delivery{mode: mode, preview: c.PreviewTokens}
}

// descriptorMode is [DeliveryDescriptor], the default: the
// specification's descriptor, every field and ten recipes.
type descriptorMode struct{}

func (descriptorMode) outcome(ctx context.Context, o *engine, s *subject) (Outcome, error) {
	return o.writeOut(ctx, s)
}

func (descriptorMode) pointer(_ *engine, r *OffloadResponse, _ reply, _ bool) any { return r }

func (descriptorMode) pointerTokens(*engine) int { return descriptorBudgetTokens }

func (descriptorMode) previewTokens() int { return 0 }

// linkFor returns the resource link of an offloaded file, or nil when
// the server handling call does not answer resources/read.
func (o *engine) linkFor(call host.Call, f offloadedFile) *host.ResourceLink {
	if !call.Resources {
		return nil
	}
	return o.extractor.ResourceLink(f.path, f.bytes, f.lines)
}
