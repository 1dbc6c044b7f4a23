package memserver

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/mcplro/lro/internal/memstore"
)

const (
	auditLines    = 2000    // events audit_log returns by default
	maxAuditLines = 1000000 // the most it accepts
)

const auditDescription = "Return the audit log of the memory store as plain text, one event a line, oldest first: the most recent events, up to lines of them. " +
	"Each line is `<time> <agent> <verb> <memory id> namespace=<namespace>`, where verb is created, updated, archived or linked " +
	"(a linked line adds relation=<type> target=<memory id>), e.g. `2025-03-14T09:12:00Z claude-code updated 01JP4X... namespace=_semantic/decisions`."

// An event is one line of the audit log.
type event struct {
	at   string // RFC 3339, UTC
	rank int    // the order of events of one memory at the same time
	line string
}

// The verbs of the audit log, in the order of their rank.
const (
	verbCreated = iota
	verbLinked
	verbUpdated
	verbArchived
)

var verbs = [...]string{verbCreated: "created", verbLinked: "linked", verbUpdated: "updated", verbArchived: "archived"}

func (t tools) audit(_ context.Context, args map[string]any) output {
	lines, err := intArg(args, "lines", auditLines, 1, maxAuditLines)
	if err != nil {
		return failed(err)
	}
	events := auditEvents(t.store)
	events = events[max(len(events)-lines, 0):]
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e.line)
		b.WriteByte('\n')
	}
	return output{text: b.String()}
}

// auditEvents derives the store's history from its memories, oldest
// first: each memory was created by its agent, linked to the memories it
// has relationships with, and updated (or archived) when it was modified.
func auditEvents(store *memstore.Store) []event {
	mems, _ := store.List("", 0, 0)
	events := make([]event, 0, 2*len(mems))
	add := func(m *memstore.Memory, at string, verb int, more string) {
		at = utc(at)
		agent := cmp.Or(m.Provenance.Agent, "unknown")
		line := at + " " + agent + " " + verbs[verb] + " " + m.ID + " namespace=" + m.Namespace + more
		events = append(events, event{at: at, rank: verb, line: line})
	}
	for _, m := range mems {
		add(m, m.Created, verbCreated, "")
		for _, r := range m.Relationships {
			add(m, m.Created, verbLinked, " relation="+r.Type+" target="+r.Target)
		}
		switch {
		case m.Status == "archived":
			add(m, m.Modified, verbArchived, "")
		case m.Modified != m.Created:
			add(m, m.Modified, verbUpdated, "")
		}
	}
	slices.SortStableFunc(events, func(a, b event) int {
		return cmp.Or(strings.Compare(a.at, b.at), cmp.Compare(a.rank, b.rank), strings.Compare(a.line, b.line))
	})
	return events
}

// utc returns a timestamp in UTC, to the second, so that the log sorts as
// text; one that does not parse is kept as it is.
func utc(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ts
	}
	return t.UTC().Format(time.RFC3339)
}
