// Package structqtest holds the end-to-end suite of lro_extract's
// questions without jq, written once and run through every client the
// module supports (mcp-go's in-process client, the official Go SDK's): data
// shaped like three real servers' results, and each question's answer
// computed independently, in plain Go over the same data. It is test
// support, not part of the API.
package structqtest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

// Order is a row of an orders table as server-postgres returns it: numeric
// columns arrive as strings ("1234.50"); Cents is the amount exactly.
type Order struct {
	ID       int
	Customer string
	Cents    int64
	Status   string
	Created  string // RFC 3339
	Note     string
}

// Amount is the amount as PostgreSQL prints a numeric(12,2).
func (o Order) Amount() string { return fmt.Sprintf("%d.%02d", o.Cents/100, o.Cents%100) }

// Orders returns n orders, the same every time.
func Orders(n int) []Order {
	r := rand.New(rand.NewPCG(1, 2))
	statuses := []string{"paid", "paid", "paid", "pending", "refunded"}
	notes := []string{"", "leave at the door", "EXPEDITE please", "gift wrap", "call before delivery", "expedite if possible"}
	out := make([]Order, n)
	for i := range out {
		out[i] = Order{
			ID:       i + 1,
			Customer: fmt.Sprintf("cust-%02d", r.IntN(40)),
			Cents:    int64(r.IntN(200000)) + 1, // 0.01 to 2000.00
			Status:   statuses[r.IntN(len(statuses))],
			Created:  fmt.Sprintf("2026-%02d-%02dT%02d:%02d:00Z", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60)),
			Note:     notes[r.IntN(len(notes))],
		}
	}
	return out
}

// OrdersJSON is the rows as the server prints them.
func OrdersJSON(orders []Order) string {
	rows := make([]map[string]any, len(orders))
	for i, o := range orders {
		rows[i] = map[string]any{"id": o.ID, "customer": o.Customer, "amount": o.Amount(), "status": o.Status, "created_at": o.Created, "note": o.Note}
	}
	return mustJSON(rows)
}

// Entity and Relation are a knowledge graph as the memory server's
// read_graph returns it: {"entities": [...], "relations": [...]}.
type Entity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

// Relation is an edge of the graph.
type Relation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

// Graph returns a graph of n entities and 2n relations.
func Graph(n int) ([]Entity, []Relation) {
	r := rand.New(rand.NewPCG(3, 4))
	types := []string{"service", "person", "database", "team"}
	facts := []string{"runs on Kubernetes", "owned by platform", "deprecated in 2025", "handles payments", "pages on-call", "written in Go", "kubernetes operator installed"}
	es := make([]Entity, n)
	for i := range es {
		obs := make([]string, r.IntN(4))
		for j := range obs {
			obs[j] = facts[r.IntN(len(facts))]
		}
		es[i] = Entity{Name: fmt.Sprintf("%s-%03d", []string{"svc", "dev", "db", "team"}[i%4], i), EntityType: types[i%4], Observations: obs}
	}
	rels := []string{"depends_on", "owns", "calls", "member_of"}
	rs := make([]Relation, 2*n)
	for i := range rs {
		rs[i] = Relation{From: es[r.IntN(n)].Name, To: es[r.IntN(n)].Name, RelationType: rels[r.IntN(len(rels))]}
	}
	return es, rs
}

// GraphJSON is the graph as read_graph prints it.
func GraphJSON(es []Entity, rs []Relation) string {
	return mustJSON(map[string]any{"entities": es, "relations": rs})
}

// Event is a structured log event with a trace: root spans have no
// parent; the latency arrives as a string, as some exporters write it.
type Event struct {
	TS      string
	Level   string
	Service string
	Msg     string
	TraceID string
	Parent  string // "" for a root span: the key is absent
	Status  int
	Latency string // milliseconds, "12.5"
}

// Events returns n events in time order.
func Events(n int) []Event {
	r := rand.New(rand.NewPCG(5, 6))
	levels := []string{"info", "info", "info", "warn", "error"}
	services := []string{"api", "billing", "search", "auth"}
	msgs := []string{"request served", "upstream timeout after 30s", "connection refused by db", "cache miss", "retrying request", "Timeout waiting for lock"}
	out := make([]Event, n)
	for i := range out {
		e := Event{
			TS:      fmt.Sprintf("2026-11-28T%02d:%02d:%02d.%03dZ", i/3600%24, i/60%60, i%60, r.IntN(1000)),
			Level:   levels[r.IntN(len(levels))],
			Service: services[r.IntN(len(services))],
			Msg:     msgs[r.IntN(len(msgs))],
			TraceID: fmt.Sprintf("t%05d", i/3),
			Status:  []int{200, 200, 200, 404, 500, 503}[r.IntN(6)],
			Latency: fmt.Sprintf("%d.%d", r.IntN(900), r.IntN(10)),
		}
		if i%3 != 0 {
			e.Parent = fmt.Sprintf("s%05d", i-1)
		}
		out[i] = e
	}
	return out
}

// EventsJSON is the events as a log server prints them: nested objects.
func EventsJSON(events []Event) string {
	rows := make([]map[string]any, len(events))
	for i, e := range events {
		rows[i] = e.Row()
	}
	return mustJSON(map[string]any{"events": rows})
}

// Row is the event as the server prints it.
func (e Event) Row() map[string]any {
	trace := map[string]any{"id": e.TraceID}
	if e.Parent != "" {
		trace["parent"] = e.Parent
	}
	return map[string]any{"ts": e.TS, "level": e.Level, "service": e.Service, "msg": e.Msg, "trace": trace,
		"http": map[string]any{"status": e.Status, "latency_ms": e.Latency}}
}

// LogLines is a plain-text log of n lines, as a tail tool returns it:
// offloaded as {"line", "text"} records.
func LogLines(n int) []string {
	levels := []string{"INFO", "INFO", "WARN", "ERROR"}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("2026-11-28T05:%02d:%02dZ %s worker-%d processed batch %d", i/60%60, i%60, levels[(i*7)%len(levels)], i%5, i)
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
