package lro

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcplro/lro/host"
)

// A page over the bound that still has an active cursor (next_cursor,
// nextCursor, cursor, has_more: true, ...) is neither offloaded nor cut.
// The specification judges the total set before any cursor exists, and a
// set MUST NOT be both offloaded and have an active cursor: a file of one
// page would hide the others. Cutting the page while its cursor goes out
// loses the records cut, since the cursor points past them. So nothing of
// the page goes out: the answer is a tool error that names a page size
// that fits, and the client pages inline under the bound, every record
// reachable. A last page, without an active cursor, is offloaded as any
// result. The server's author is told once that the tool pages by itself:
// handing the full set to lro.Collect lets lro take precedence over
// pagination, as the specification asks, with one file for every record.

// pageRefused is the answer to s, a page over the bound with an active
// cursor: a tool error naming a page size that fits.
func (o *Offloader) pageRefused(ctx context.Context, call host.Call, s *subject) host.Result {
	o.noteOnce(ctx, call.Tool, "pages",
		"lro: tool "+call.Tool+" pages by itself ("+s.cursor+") and does not hand its full set to lro.Collect, "+
			"so a page over the threshold is refused with a tool error naming a smaller page size: "+
			"offloading one page would hide the others, and cutting it would lose the records cut. "+
			"Call lro.Collect(ctx, allRecords, scores) in the handler to have the full set offloaded to one file, "+
			"as the specification's precedence of offloading over pagination asks")
	count, tokens := 0, 0
	for _, set := range s.sets {
		count += set.count()
		tokens += set.Tokens
	}
	// The leading records that fit beside the page's other fields, less a
	// tenth, so that the next pages, whose records may be longer, fit too.
	out := o.truncateInline(s.sets, s.l, s.beside)
	n := out.kept[0]
	n = min(n-n/10, s.sets[0].count()-1)
	var ask string
	switch arg := pageSizeArgument(call); {
	case n < 1:
		ask = "Its first record alone is larger than that: ask for a lower detail level or fewer fields, if the tool has them."
	case arg != "":
		ask = fmt.Sprintf("Call %s again with the same arguments and %q: %d (or less) to page through it inline; "+
			"or with a %s that takes in the whole set, if the tool allows one: a last page, which no other follows, is offloaded whole to a file.",
			call.Tool, arg, n, arg)
	default:
		ask = fmt.Sprintf("Call %s again asking for at most %d records a page to page through it inline.", call.Tool, n)
	}
	msg := fmt.Sprintf("%s: this page of %d records (about %d tokens) is over the %d tokens a result may take in the context, "+
		"and more pages follow it (%q): lro neither offloads one page (the file would hide the other pages) nor cuts it (the records cut would be lost behind the cursor), "+
		"so nothing of it was sent. %s", call.Tool, count, tokens, o.cfg.ThresholdTokens, s.cursor, ask)
	return host.Result{IsError: true, Content: []host.Content{host.TextContent(msg)}}
}

// noteOnce logs msg at warning level, once per tool and key: what the
// server's author should know of a tool, said once.
func (o *Offloader) noteOnce(ctx context.Context, tool, key, msg string) {
	if _, loaded := o.warned.LoadOrStore(tool+"\x00"+key, true); loaded {
		return
	}
	o.logger().LogAttrs(ctx, slog.LevelWarn, msg, slog.String("tool", tool), slog.Int("threshold_tokens", o.cfg.ThresholdTokens))
}

// noteCollectedPage tells the server's author, once per tool, that a call
// which asked for a page of fewer records than the handler handed to
// Collect had the whole set offloaded: the specification's precedence of
// offloading over pagination, which a limit meant as a cap ("the 5 best")
// does not want. The handler then hands Collect only those.
func (o *Offloader) noteCollectedPage(ctx context.Context, call host.Call, count int) {
	n := pageSize(call)
	if n == 0 || count <= n {
		return
	}
	o.noteOnce(ctx, call.Tool, "collected page",
		fmt.Sprintf("lro: tool %s was asked for %d records a page and handed %d to lro.Collect: the whole set was offloaded, "+
			"as the specification's precedence of offloading over pagination asks. If the limit is a cap the caller means "+
			"(the %d best), hand Collect only those records", call.Tool, n, count, n))
}
