package extract

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
	"github.com/mcplro/lro/internal/admit"
	"github.com/mcplro/lro/internal/store"
	"github.com/mcplro/lro/internal/textlines"
	"github.com/oklog/ulid/v2"
)

// Offloaded files as MCP resources: see the root package's lro_extract.go
// for the URIs.

const (
	// ResourceRoot starts the URI of every offloaded file.
	ResourceRoot = "lro://files/"
	// ResourceLines follows a file's name in the URI of a range of its
	// lines.
	ResourceLines = "/lines/"
	// MaxResourceRead is the highest read limit: a range is built in
	// memory.
	MaxResourceRead = 1 << 30

	maxResourceURI = 1024 // far longer than any URI this package makes
	mimeJSONL      = "application/jsonl"
	mimeText       = "text/plain"
)

// ServeResources is lro.Host.ServeResources.
func (o *Tool) ServeResources() []host.ResourceTemplate {
	if o.env.ResourcesOff {
		return nil
	}
	o.resources.Store(true)
	base := ResourceRoot + o.env.FilePrefix + "-{operation}-{id}.jsonl"
	limit := o.ResourceMaxBytes()
	return []host.ResourceTemplate{
		{
			URITemplate: base,
			Name:        "offloaded_result",
			Description: fmt.Sprintf("A tool result offloaded to a file: JSON Lines, a header line then one record a line. Returned whole up to %d bytes; read a larger one by lines.", limit),
		},
		{
			URITemplate: base + ResourceLines + "{range}",
			Name:        "offloaded_result_lines",
			Description: fmt.Sprintf("Lines of an offloaded tool result, as sed -n prints them: range is FROM-TO (numbered from 1, inclusive), a single line N, or FROM- for the rest; at most %d bytes.", limit),
		},
	}
}

// ReadResource is lro.Host.ReadResource.
func (o *Tool) ReadResource(ctx context.Context, uri string) (host.ResourceContents, error) {
	name, rng, ranged, err := o.ParseResourceURI(uri)
	if err != nil {
		return host.ResourceContents{}, err
	}
	lim := o.env.Limits.withDefaults()
	ticket, err := enterRead(ctx, lim)
	if err != nil {
		return host.ResourceContents{}, fmt.Errorf("%w: %s: %v", ErrResourceBusy, uri, err)
	}
	defer ticket.Leave()
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()

	f, err := o.openOffload(name)
	if err != nil {
		err = o.resourceOpenError(uri, name, err)
		o.env.Store.Failed(ctx, "resources/read", err)
		return host.ResourceContents{}, err
	}
	defer f.Close()
	// The size as the file system tells it, before a byte is read: a
	// sparse file of 50 GB under a valid name is refused at once.
	if f.size > lim.MaxFileBytes {
		return host.ResourceContents{}, fmt.Errorf("%w: %s is %d bytes, more than the %d bytes this server reads of a file", ErrResourceTooLarge, uri, f.size, lim.MaxFileBytes)
	}
	limit := o.ResourceMaxBytes()
	var c host.ResourceContents
	if !ranged {
		c, err = o.readWhole(ctx, uri, name, f, limit, lim, ticket)
	} else {
		c, err = o.readRange(ctx, uri, f, rng, limit, lim, ticket)
	}
	if info, serr := f.f.Stat(); serr == nil && err == nil {
		c.Expires = info.ModTime() // the library records a file's expiry there
	}
	var se *store.Error
	switch {
	case errors.As(err, &se):
		o.env.Store.Failed(ctx, "resources/read", err)
		return host.ResourceContents{}, err
	case errors.Is(err, context.DeadlineExceeded):
		return host.ResourceContents{}, fmt.Errorf("lro: reading %s took longer than %s and was stopped; read fewer lines", uri, lim.Timeout)
	case errors.Is(err, context.Canceled):
		return host.ResourceContents{}, fmt.Errorf("lro: reading %s: %w", uri, err)
	}
	return c, err
}

// readWhole returns the whole file f, of at most limit bytes.
func (o *Tool) readWhole(ctx context.Context, uri, name string, f *offloadFile, limit int64, lim Limits, ticket *admit.Ticket) (host.ResourceContents, error) {
	if f.size > limit {
		return host.ResourceContents{}, o.tooLarge(ctx, uri, name, f.size, limit)
	}
	if err := ticket.Reserve(f.size+resourceChunk, lim.MaxCallBytes); err != nil {
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
func (o *Tool) readRange(ctx context.Context, uri string, f *offloadFile, rng textlines.Range, limit int64, lim Limits, ticket *admit.Ticket) (host.ResourceContents, error) {
	if err := ticket.Reserve(limit+textlines.BufSize, lim.MaxCallBytes); err != nil {
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

// ResourceLink returns the link to the offloaded file at path, of size
// bytes, holding lines of text when text is set; nil when this Offloader
// does not serve resources (see [Host.ServeResources]).
func (o *Tool) ResourceLink(path string, size int64, text bool) *host.ResourceLink {
	if !o.ServesResources() {
		return nil
	}
	name := path[strings.LastIndexAny(path, `/\`)+1:]
	if _, _, temp, ok := store.ParseFileName(o.env.FilePrefix, name); !ok || temp || o.env.FS.Path(name) != path {
		return nil
	}
	uri := ResourceRoot + name
	l := &host.ResourceLink{URI: uri, Name: name, MIMEType: mimeJSONL, Size: size}
	kind := "JSON Lines: a header line, then one record a line"
	if text {
		l.MIMEType = mimeText
		kind = `JSON Lines: a header line, then one {"line","text"} record a line of text`
	}
	if limit := o.ResourceMaxBytes(); size > limit {
		l.Description = fmt.Sprintf("Offloaded result, %s; too large to read whole (over %d bytes): append /lines/1-200 to this URI to read lines 1-200", kind, limit)
	} else {
		l.Description = fmt.Sprintf("Offloaded result, %s; append /lines/1-200 to this URI to read lines 1-200", kind)
	}
	return l
}

// ServesResources is lro.Host.ServesResources.
func (o *Tool) ServesResources() bool {
	return !o.env.ResourcesOff && o.resources.Load()
}

// ParseResourceURI returns the file name and line range uri names. It
// decodes nothing: a name of this Offloader holds only letters, digits,
// '_', '-' and '.', so any other character (an escape, a slash, a NUL)
// makes the URI one it did not make.
func (o *Tool) ParseResourceURI(uri string) (name string, rng textlines.Range, ranged bool, err error) {
	if len(uri) > maxResourceURI {
		return "", rng, false, fmt.Errorf("%w: the URI is %d bytes long, longer than any this server makes (%s{name})", ErrResourceNotFound, len(uri), ResourceRoot)
	}
	rest, ok := strings.CutPrefix(uri, ResourceRoot)
	if !ok {
		return "", rng, false, fmt.Errorf("%w: %s is not an offloaded file's URI (%s{name})", ErrResourceNotFound, quoteURI(uri), ResourceRoot)
	}
	name, text, ranged := strings.Cut(rest, ResourceLines)
	if _, id, temp, ok := store.ParseFileName(o.env.FilePrefix, name); !ok || temp || !o.env.Store.Owns(id) {
		return "", rng, false, fmt.Errorf("%w: %s does not name an offloaded file of this server (%s%s-{operation}-{ULID}.jsonl)", ErrResourceNotFound, quoteURI(uri), ResourceRoot, o.env.FilePrefix)
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
func (o *Tool) resourceOpenError(uri, name string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("lro: cannot read %s: %w", uri, err)
	}
	_, id, _, _ := store.ParseFileName(o.env.FilePrefix, name)
	if time.Since(ulid.Time(id.Time())) >= o.env.TTL {
		return fmt.Errorf("%w: %s has expired: offloaded files are deleted %s after they are written; call the original tool again for a fresh result", ErrResourceNotFound, uri, o.env.TTL)
	}
	return fmt.Errorf("%w: %s no longer exists; call the original tool again for a fresh result", ErrResourceNotFound, uri)
}

// tooLarge explains that the file of uri is over the read limit, and how
// to read it anyway: by lines, or with lro_extract when the server has it
// (as the host adapter told through the context) or may have it.
func (o *Tool) tooLarge(ctx context.Context, uri, name string, size, limit int64) error {
	extract := ""
	switch native, known := Native(ctx); {
	case native || !known && o.native.Load():
		extract = fmt.Sprintf(", or query it with the %s tool (file_path %q)", ToolName, o.env.FS.Path(name))
	case !known:
		// A host that does not say whether it serves lro_extract.
		extract = fmt.Sprintf(", or, if the server has the %s tool, query it there (file_path %q)", ToolName, o.env.FS.Path(name))
	}
	return fmt.Errorf("%w: %s is %d bytes, more than the %d that resources/read returns at once; read it by lines with %s%s{range} (a range such as 1-1000, or 1000- for the rest)%s",
		ErrResourceTooLarge, uri, size, limit, uri, ResourceLines, extract)
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

// ResourceMaxBytes returns the read limit.
func (o *Tool) ResourceMaxBytes() int64 { return o.env.ResourceMaxBytes }
