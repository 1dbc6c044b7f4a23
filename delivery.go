package lro

import (
	"fmt"
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

// ParseDelivery parses "descriptor", "compact" or "truncate".
func ParseDelivery(s string) (Delivery, error) {
	switch d := Delivery(s); d {
	case DeliveryDescriptor, DeliveryCompact, DeliveryTruncate:
		return d, nil
	}
	return "", fmt.Errorf("lro: unknown delivery %q: want \"descriptor\", \"compact\" or \"truncate\"", s)
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

// deliveryOf returns the delivery of an offloaded result of call, chosen
// on first use and then remembered: the session budget asks for it before
// the result is offloaded, and WithDelivery's function runs once a call.
func (o *engine) deliveryOf(call host.Call) func() DeliveryChoice {
	return sync.OnceValue(func() DeliveryChoice { return o.deliveryFor(call) })
}

// deliveryFor chooses the delivery of an offloaded result of call.
func (o *engine) deliveryFor(call host.Call) DeliveryChoice {
	c := DeliveryChoice{Mode: o.cfg.Delivery}
	if choose := o.opts.delivery; choose != nil {
		got := choose(DeliveryRequest{Tool: call.Tool, Client: call.Client, NativeExtract: call.NativeExtract, Resources: call.Resources, Default: o.cfg.Delivery})
		if _, err := ParseDelivery(string(got.Mode)); err == nil {
			c.Mode = got.Mode
		}
		c.PreviewTokens = got.PreviewTokens
	}
	if c.PreviewTokens == 0 && c.Mode == DeliveryCompact {
		c.PreviewTokens = DefaultPreviewTokens
	}
	return c
}

// linkFor returns the resource link of an offloaded file, or nil when
// the server handling call does not answer resources/read.
func (o *engine) linkFor(call host.Call, f offloadedFile) *host.ResourceLink {
	if !call.Resources {
		return nil
	}
	return o.resourceLink(f.path, f.bytes, f.lines)
}
