package lro

import "fmt"

// Delivery is how an offloaded result reaches the model.
type Delivery string

// The delivery modes.
const (
	// DeliveryDescriptor sends the specification's OffloadResponse: every
	// field, ten recipes. It is the default.
	DeliveryDescriptor Delivery = "descriptor"
	// DeliveryCompact sends a bare pointer and what a model needs to act
	// on it: the file path, the summary, one line of guidance, the
	// resource link and a short preview.
	DeliveryCompact Delivery = "compact"
	// DeliveryTruncate writes no file: whole records up to the threshold
	// go inline, with a notice of how many were left out. It is for
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
