package lro

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/store"
	"github.com/mcplro/lro/internal/textlines"
	"github.com/oklog/ulid/v2"
)

// Offloaded files as MCP resources. A file is named by a URI that does not
// assume the client shares the server's disk:
//
//	lro://files/{name}              the whole file, up to the read limit
//	lro://files/{name}/lines/{range} lines of it, as sed -n prints them
//
// where {name} is the file's name ({prefix}-{operation}-{ULID}.jsonl) and
// {range} is 100-200, 5 or 100-. The server answers resources/read for
// these URIs with [Host.ReadResource], through the resource
// templates of [Host.ServeResources], and offloaded results carry a
// resource_link to their file.

const (
	resourceRoot    = "lro://files/"
	resourceLines   = "/lines/"
	maxResourceURI  = 1024 // far longer than any URI this package makes
	mimeJSONL       = "application/jsonl"
	mimeText        = "text/plain"
	maxResourceRead = 1 << 30 // the highest read limit: a range is built in memory
)

// ServeResources is for host adapters: it returns the resource templates
// to register, whose reads [Host.ReadResource] answers, and marks the
// Offloader as serving them, so that offloaded results carry a resource
// link to their file from then on. It returns nil, and links stay off,
// when [WithoutResourceLinks] was given.
//
// The templates' URIs hold the file prefix: Offloaders with different
// prefixes can serve resources on one server without their templates
// overlapping.
func (h Host) ServeResources() []host.ResourceTemplate {
	o := h.o
	if o.opts.resourcesOff {
		return nil
	}
	o.resources.Store(true)
	base := resourceRoot + o.cfg.FilePrefix + "-{operation}-{id}.jsonl"
	limit := o.resourceMaxBytes()
	return []host.ResourceTemplate{
		{
			URITemplate: base,
			Name:        "offloaded_result",
			Description: fmt.Sprintf("A tool result offloaded to a file: JSON Lines, a header line then one record a line. Returned whole up to %d bytes; read a larger one by lines.", limit),
		},
		{
			URITemplate: base + resourceLines + "{range}",
			Name:        "offloaded_result_lines",
			Description: fmt.Sprintf("Lines of an offloaded tool result, as sed -n prints them: range is FROM-TO (numbered from 1, inclusive), a single line N, or FROM- for the rest; at most %d bytes.", limit),
		},
	}
}

// ReadResource answers resources/read for uri, a URI of
// lro://files/{name} or lro://files/{name}/lines/{range}: the whole file
// when it is at most the read limit (see [WithResourceMaxBytes]), or the
// lines in the range, as sed -n prints them, up to the limit (a longer
// line is cut, with a note).
//
// Only files of this Offloader are read, opened as lro_extract opens
// them: names of its prefix and pattern, regular files with a single link
// (not a hard link to a file elsewhere), never through a symbolic link,
// never blocking. A read is admitted, bounded and timed as an lro_extract
// call (see [ExtractLimits]): it counts against MaxCalls and
// MaxCallBytes, and when they are spent it fails at once, wrapping
// [ErrResourceBusy] ("busy, retry in N s"); it ends by Timeout; and no
// file larger than MaxFileBytes is read, whole or by lines.
//
// Errors are for the model and wrap [ErrResourceNotFound],
// [ErrResourceTooLarge] or [ErrResourceBusy], or say why the file could
// not be read.
func (h Host) ReadResource(ctx context.Context, uri string) (host.ResourceContents, error) {
	o := h.o
	name, rng, ranged, err := o.parseResourceURI(uri)
	if err != nil {
		return host.ResourceContents{}, err
	}
	lim := o.opts.extractLimits.withDefaults()
	ticket, err := extractCalls.enter(lim.MaxCalls, lim.Timeout+time.Second)
	if err != nil {
		return host.ResourceContents{}, fmt.Errorf("%w: %s: %v", ErrResourceBusy, uri, err)
	}
	defer extractCalls.leave(ticket)
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()

	f, err := o.openOffload(name)
	if err != nil {
		err = o.resourceOpenError(uri, name, err)
		o.store.Failed(ctx, "resources/read", err)
		return host.ResourceContents{}, err
	}
	defer f.Close()
	// The size as the file system tells it, before a byte is read: a
	// sparse file of 50 GB under a valid name is refused at once.
	if f.size > lim.MaxFileBytes {
		return host.ResourceContents{}, fmt.Errorf("%w: %s is %d bytes, more than the %d bytes this server reads of a file", ErrResourceTooLarge, uri, f.size, lim.MaxFileBytes)
	}
	limit := o.resourceMaxBytes()
	var c host.ResourceContents
	if !ranged {
		c, err = o.readWhole(ctx, uri, name, f, limit, lim, ticket)
	} else {
		c, err = o.readRange(ctx, uri, f, rng, limit, lim, ticket)
	}
	var se *store.Error
	switch {
	case errors.As(err, &se):
		o.store.Failed(ctx, "resources/read", err)
		return host.ResourceContents{}, err
	case errors.Is(err, context.DeadlineExceeded):
		return host.ResourceContents{}, fmt.Errorf("lro: reading %s took longer than %s and was stopped; read fewer lines", uri, lim.Timeout)
	case errors.Is(err, context.Canceled):
		return host.ResourceContents{}, fmt.Errorf("lro: reading %s: %w", uri, err)
	}
	return c, err
}

// readWhole returns the whole file f, of at most limit bytes.
func (o *engine) readWhole(ctx context.Context, uri, name string, f *offloadFile, limit int64, lim ExtractLimits, ticket *admitted) (host.ResourceContents, error) {
	if f.size > limit {
		return host.ResourceContents{}, o.tooLarge(ctx, uri, name, f.size, limit)
	}
	if err := extractCalls.reserve(ticket, f.size+resourceChunk, lim.MaxCallBytes); err != nil {
		return host.ResourceContents{}, fmt.Errorf("%w: %s: %v", ErrResourceBusy, uri, err)
	}
	// Read in chunks into the text itself, checking the deadline between
	// them; a file that grew past its size (it should not) is refused.
	var b strings.Builder
	b.Grow(int(f.size))
	buf := make([]byte, resourceChunk)
	for {
		if err := ctx.Err(); err != nil {
			return host.ResourceContents{}, err
		}
		n, err := f.f.Read(buf)
		if int64(b.Len()+n) > limit {
			return host.ResourceContents{}, o.tooLarge(ctx, uri, name, int64(b.Len()+n), limit)
		}
		b.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return host.ResourceContents{}, fmt.Errorf("lro: cannot read %s: %w", uri, err)
		}
	}
	text := b.String()
	return host.ResourceContents{URI: uri, MIMEType: sniffMIME(text), Text: text}, nil
}

// readRange returns the lines of f in rng, at most limit bytes of them.
func (o *engine) readRange(ctx context.Context, uri string, f *offloadFile, rng textlines.Range, limit int64, lim ExtractLimits, ticket *admitted) (host.ResourceContents, error) {
	if err := extractCalls.reserve(ticket, limit+textlines.BufSize, lim.MaxCallBytes); err != nil {
		return host.ResourceContents{}, fmt.Errorf("%w: %s: %v", ErrResourceBusy, uri, err)
	}
	br := bufio.NewReaderSize(f.f, textlines.BufSize)
	head, _ := br.Peek(textlines.BufSize) // what there is: the type shows in the first lines
	mime := sniffMIME(head)
	out, err := textlines.ReadLines(ctx, br, rng, false, textlines.Limits{Budget: int(limit), MaxLine: int(limit)})
	if err != nil {
		if ctx.Err() != nil {
			return host.ResourceContents{}, err
		}
		return host.ResourceContents{}, fmt.Errorf("lro: cannot read %s: %w", uri, err)
	}
	if out.Shown == 0 {
		return host.ResourceContents{}, fmt.Errorf("%w: %s: the file has %d lines; line %d is past its end", ErrResourceNotFound, uri, out.Lines, rng.From)
	}
	return host.ResourceContents{URI: uri, MIMEType: mime, Text: out.Text}, nil
}

// textLinePrefix starts each record of a file of text lines.
const textLinePrefix = `{"line":`

// resourceChunk is what a whole read reads at a time, between looks at
// its deadline.
const resourceChunk = 256 << 10

// resourceLink returns the link to the offloaded file at path, of size
// bytes, holding lines of text when text is set; nil when this Offloader
// does not serve resources (see [Host.ServeResources]).
func (o *engine) resourceLink(path string, size int64, text bool) *host.ResourceLink {
	if !o.Host().ServesResources() {
		return nil
	}
	name := path[strings.LastIndexAny(path, `/\`)+1:]
	if _, _, temp, ok := store.ParseFileName(o.cfg.FilePrefix, name); !ok || temp || o.opts.fs.Path(name) != path {
		return nil
	}
	uri := resourceRoot + name
	l := &host.ResourceLink{URI: uri, Name: name, MIMEType: mimeJSONL, Size: size}
	kind := "JSON Lines: a header line, then one record a line"
	if text {
		l.MIMEType = mimeText
		kind = `JSON Lines: a header line, then one {"line","text"} record a line of text`
	}
	if limit := o.resourceMaxBytes(); size > limit {
		l.Description = fmt.Sprintf("Offloaded result, %s; too large to read whole (over %d bytes): append /lines/1-200 to this URI to read lines 1-200", kind, limit)
	} else {
		l.Description = fmt.Sprintf("Offloaded result, %s; append /lines/1-200 to this URI to read lines 1-200", kind)
	}
	return l
}

// ServesResources reports whether resource links go out: ServeResources
// was called (by [Offloader.AddResources], [Offloader.ServerOption] or the
// gosdk adapter) and WithoutResourceLinks was not given. Adapters set
// Call.Resources from it.
func (h Host) ServesResources() bool {
	o := h.o
	return !o.opts.resourcesOff && o.resources.Load()
}

// parseResourceURI returns the file name and line range uri names. It
// decodes nothing: a name of this Offloader holds only letters, digits,
// '_', '-' and '.', so any other character (an escape, a slash, a NUL)
// makes the URI one it did not make.
func (o *engine) parseResourceURI(uri string) (name string, rng textlines.Range, ranged bool, err error) {
	if len(uri) > maxResourceURI {
		return "", rng, false, fmt.Errorf("%w: the URI is %d bytes long, longer than any this server makes (%s{name})", ErrResourceNotFound, len(uri), resourceRoot)
	}
	rest, ok := strings.CutPrefix(uri, resourceRoot)
	if !ok {
		return "", rng, false, fmt.Errorf("%w: %s is not an offloaded file's URI (%s{name})", ErrResourceNotFound, quoteURI(uri), resourceRoot)
	}
	name, text, ranged := strings.Cut(rest, resourceLines)
	if _, id, temp, ok := store.ParseFileName(o.cfg.FilePrefix, name); !ok || temp || !o.store.Owns(id) {
		return "", rng, false, fmt.Errorf("%w: %s does not name an offloaded file of this server (%s%s-{operation}-{ULID}.jsonl)", ErrResourceNotFound, quoteURI(uri), resourceRoot, o.cfg.FilePrefix)
	}
	if ranged {
		if strings.Trim(text, "0123456789-") != "" {
			return "", rng, false, fmt.Errorf("%w: %s: invalid line range %s; want FROM-TO such as 100-200, a single line such as 5, or FROM- for the rest of the file", ErrResourceNotFound, quoteURI(uri), quoteURI(text))
		}
		if rng, err = textlines.ParseRange(text); err != nil {
			return "", rng, false, fmt.Errorf("%w: %s: %v", ErrResourceNotFound, quoteURI(uri), err)
		}
	}
	return name, rng, ranged, nil
}

// quoteURI quotes s for an error message, cut to a readable length.
func quoteURI(s string) string {
	if len(s) > 200 {
		return fmt.Sprintf("%q...", s[:200])
	}
	return fmt.Sprintf("%q", s)
}

// resourceOpenError explains why the file of uri could not be opened.
func (o *engine) resourceOpenError(uri, name string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("lro: cannot read %s: %w", uri, err)
	}
	_, id, _, _ := store.ParseFileName(o.cfg.FilePrefix, name)
	if time.Since(ulid.Time(id.Time())) >= o.cfg.TTL() {
		return fmt.Errorf("%w: %s has expired: offloaded files are deleted %s after they are written; call the original tool again for a fresh result", ErrResourceNotFound, uri, o.cfg.TTL())
	}
	return fmt.Errorf("%w: %s no longer exists; call the original tool again for a fresh result", ErrResourceNotFound, uri)
}

// tooLarge explains that the file of uri is over the read limit, and how
// to read it anyway: by lines, or with lro_extract when the server has it
// (as the host adapter told through the context) or may have it.
func (o *engine) tooLarge(ctx context.Context, uri, name string, size, limit int64) error {
	extract := ""
	switch native, known := ctx.Value(nativeKey{}).(bool); {
	case native || !known && o.native.Load():
		extract = fmt.Sprintf(", or query it with the %s tool (file_path %q)", ExtractToolName, o.opts.fs.Path(name))
	case !known:
		// A host that does not say whether it serves lro_extract.
		extract = fmt.Sprintf(", or, if the server has the %s tool, query it there (file_path %q)", ExtractToolName, o.opts.fs.Path(name))
	}
	return fmt.Errorf("%w: %s is %d bytes, more than the %d that resources/read returns at once; read it by lines with %s%s{range} (a range such as 1-1000, or 1000- for the rest)%s",
		ErrResourceTooLarge, uri, size, limit, uri, resourceLines, extract)
}

// sniffMIME returns the type of a file that starts with p: text/plain
// when its records are the lines of a text result, else JSON Lines.
func sniffMIME[T string | []byte](p T) string {
	for i := 0; i < len(p) && i < textlines.BufSize; i++ {
		if p[i] == '\n' {
			if rest := p[i+1:]; len(rest) >= len(textLinePrefix) && string(rest[:len(textLinePrefix)]) == textLinePrefix {
				return mimeText
			}
			break
		}
	}
	return mimeJSONL
}

// resourceMaxBytes returns the read limit.
func (o *engine) resourceMaxBytes() int64 { return o.opts.resourceMaxBytes }
