package lro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/records"
	"github.com/mcplro/lro/internal/store"
	"github.com/mcplro/lro/internal/textlines"
	"github.com/mcplro/lro/lrotest"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resourceOffloader returns an Offloader over a fresh directory, with a
// small threshold, serving resources.
func resourceOffloader(t testing.TB, opts ...Option) *Offloader {
	t.Helper()
	cfg := DefaultConfig()
	cfg.OutputDir = t.TempDir()
	cfg.ThresholdTokens = 100
	o, err := New(cfg, append([]Option{WithoutJanitor()}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { o.Close() })
	o.Host().ServeResources()
	return o
}

// offloadTickets offloads n generic records and returns the file's path
// and content.
func offloadTickets(t testing.TB, o *Offloader, n int) (string, []byte) {
	t.Helper()
	recs := make([]json.RawMessage, n)
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"id":%d,"title":"Ticket %d: the cache is cold","status":"open"}`, i+1, i+1))
	}
	out, err := o.Offload(context.Background(), ResultSet{Operation: "tickets", Records: recs, Generic: true})
	require.NoError(t, err)
	require.Equal(t, Offloaded, out.Action)
	f, err := o.opts.fs.Open(filepath.Base(out.Response.FilePath))
	require.NoError(t, err)
	defer f.Close()
	data, err := io.ReadAll(f)
	require.NoError(t, err)
	return out.Response.FilePath, data
}

func uriOf(path string) string { return resourceRoot + filepath.Base(path) }

func TestParseResourceURI(t *testing.T) {
	o := resourceOffloader(t)
	name := store.FileName(o.cfg.FilePrefix, "recall", ourID(o, time.Now()))
	good := map[string]struct {
		rng    textlines.Range
		ranged bool
	}{
		"lro://files/" + name:                 {},
		"lro://files/" + name + "/lines/5":    {textlines.Range{From: 5, To: 5}, true},
		"lro://files/" + name + "/lines/5-9":  {textlines.Range{From: 5, To: 9}, true},
		"lro://files/" + name + "/lines/100-": {textlines.Range{From: 100, To: 0}, true},
	}
	for uri, want := range good {
		n, rng, ranged, err := o.parseResourceURI(uri)
		if assert.NoError(t, err, uri) {
			assert.Equal(t, name, n)
			assert.Equal(t, want.rng, rng)
			assert.Equal(t, want.ranged, ranged)
		}
	}
	other := store.FileName("other", "recall", ulid.Make())
	bad := []string{
		"",
		"lro://files/",
		"lro://files/..",
		"lro://files/../" + name,
		"lro://files/" + name + "/..",
		"lro://files/" + name + "/../../etc/passwd",
		"lro://files/./" + name,
		"lro://files//" + name,
		"lro://files/" + other,
		"lro://files/" + store.TempName(name),
		"lro://files/" + name + "/",
		"lro://files/" + name + "?x=1",
		"lro://files/" + name + "#frag",
		"lro://files/" + name + "\x00",
		"lro://files/" + strings.Replace(name, "-", "%2D", 1),
		"lro://files/" + name + "%2Flines%2F1-2",
		"lro://files/" + name + "%2F..%2F..%2Fetc%2Fpasswd",
		"lro://files/..%2F" + name,
		"LRO://files/" + name,
		"lro://FILES/" + name,
		"lro:/files/" + name,
		"file://" + o.opts.fs.Path(name),
		o.opts.fs.Path(name),
		"lro://files/" + name + "/lines/",
		"lro://files/" + name + "/lines/0",
		"lro://files/" + name + "/lines/5-3",
		"lro://files/" + name + "/lines/1-2/lines/3",
		"lro://files/" + name + "/lines/ 1-2",
		"lro://files/" + name + "/lines/1-2\x00",
		"lro://files/" + name + "/lines/%31",
		"lro://files/" + name + "/lines/1e9",
		"lro://files/" + name + "/lines/" + strings.Repeat("9", 100),
		"lro://files/" + name + strings.Repeat("a", 1<<20),
		"lro://files/" + strings.Repeat("../", 10000) + name,
	}
	for _, uri := range bad {
		_, _, _, err := o.parseResourceURI(uri)
		if assert.Error(t, err, "%.80q", uri) {
			assert.ErrorIs(t, err, ErrResourceNotFound)
			assert.Less(t, len(err.Error()), 700, "the error is bounded")
		}
	}
}

func TestReadResource(t *testing.T) {
	ctx := context.Background()
	o := resourceOffloader(t)
	path, data := offloadTickets(t, o, 50)
	uri := uriOf(path)

	c, err := o.Host().ReadResource(ctx, uri)
	require.NoError(t, err)
	assert.Equal(t, host.ResourceContents{URI: uri, MIMEType: "application/jsonl", Text: string(data), Expires: c.Expires}, c)
	assert.True(t, c.Expires.After(time.Now()), "the file's expiry, for the read's cache hints: %v", c.Expires)

	lines := strings.SplitAfter(string(data), "\n")
	c, err = o.Host().ReadResource(ctx, uri+"/lines/2-4")
	require.NoError(t, err)
	assert.Equal(t, strings.Join(lines[1:4], ""), c.Text)
	assert.Equal(t, "application/jsonl", c.MIMEType)
	c, err = o.Host().ReadResource(ctx, uri+"/lines/51-")
	require.NoError(t, err)
	assert.Equal(t, lines[50], c.Text)
	c, err = o.Host().ReadResource(ctx, uri+"/lines/1")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(c.Text, `{"type":"lro_header"`))

	_, err = o.Host().ReadResource(ctx, uri+"/lines/52-60")
	assert.ErrorIs(t, err, ErrResourceNotFound)
	assert.ErrorContains(t, err, "the file has 51 lines; line 52 is past its end")
}

func TestReadResourceText(t *testing.T) {
	o := resourceOffloader(t)
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "2026-11-23T10:00:%02dZ level=info id=%d\n", i%60, i)
	}
	f := records.FromLines([]byte(b.String()))
	out, err := o.Offload(context.Background(), ResultSet{Operation: "logs", src: f.Src, Generic: true})
	require.NoError(t, err)
	require.Equal(t, Offloaded, out.Action)
	c, err := o.Host().ReadResource(context.Background(), uriOf(out.Response.FilePath)+"/lines/3")
	require.NoError(t, err)
	assert.Equal(t, "text/plain", c.MIMEType)
	assert.Equal(t, `{"line":2,"text":"2026-11-23T10:00:01Z level=info id=1"}`+"\n", c.Text)
	link := o.resourceLink(out.Response.FilePath, 1234, true)
	require.NotNil(t, link)
	assert.Equal(t, "text/plain", link.MIMEType)
}

func TestReadResourceTooLarge(t *testing.T) {
	ctx := context.Background()
	o := resourceOffloader(t, WithResourceMaxBytes(4096))
	path, data := offloadTickets(t, o, 200)
	require.Greater(t, len(data), 4096)
	uri := uriOf(path)

	_, err := o.Host().ReadResource(ctx, uri)
	require.ErrorIs(t, err, ErrResourceTooLarge)
	msg := err.Error()
	assert.Contains(t, msg, fmt.Sprintf("is %d bytes, more than the 4096", len(data)))
	assert.Contains(t, msg, uri+"/lines/{range}")
	assert.Contains(t, msg, ", or, if the server has the lro_extract tool, query it there (file_path \""+path+"\")", "unknown whether the server has lro_extract")
	_, err = o.Host().ReadResource(extract.WithNative(ctx, true), uri)
	assert.Contains(t, err.Error(), ", or query it with the lro_extract tool (file_path \""+path+"\")")
	_, err = o.Host().ReadResource(extract.WithNative(ctx, false), uri)
	assert.NotContains(t, err.Error(), "lro_extract", "the server has no lro_extract")

	// A range is bounded by the same limit: whole lines, then a note.
	c, err := o.Host().ReadResource(ctx, uri+"/lines/1-")
	require.NoError(t, err)
	body, note, found := strings.Cut(c.Text, "[lro: stopped before line ")
	require.True(t, found)
	assert.LessOrEqual(t, len(body), 4096)
	assert.True(t, strings.HasPrefix(string(data), body))
	assert.True(t, strings.HasSuffix(body, "\n"))
	assert.Contains(t, note, "to stay within 4096 bytes; read lines ")

	// A single line over the limit is cut, with a note.
	long := `{"id":1,"text":"` + strings.Repeat("z", 10000) + `"}`
	out, err := o.Offload(ctx, ResultSet{Operation: "big", Records: []json.RawMessage{json.RawMessage(long)}, Generic: true})
	require.NoError(t, err)
	c, err = o.Host().ReadResource(ctx, uriOf(out.Response.FilePath)+"/lines/2")
	require.NoError(t, err)
	assert.Contains(t, c.Text, "[lro: line 2 is 10018 bytes long; only its first ")
	assert.Less(t, len(c.Text), 4096+200)
	assert.NotContains(t, c.Text, long)

	// The link says it is too large to read whole.
	assert.Contains(t, o.resourceLink(path, int64(len(data)), false).Description, "too large to read whole")
}

func TestReadResourceRefuses(t *testing.T) {
	ctx := context.Background()
	o := resourceOffloader(t)
	dir := filepath.Dir(o.opts.fs.Path("x"))
	path, _ := offloadTickets(t, o, 50)

	// Gone, and expired.
	gone := store.FileName(o.cfg.FilePrefix, "recall", ourID(o, time.Now()))
	_, err := o.Host().ReadResource(ctx, resourceRoot+gone)
	assert.ErrorIs(t, err, ErrResourceNotFound)
	assert.ErrorContains(t, err, "no longer exists")
	old, err := store.IDFor(o.Name(), time.Now().Add(-48*time.Hour))
	require.NoError(t, err)
	_, err = o.Host().ReadResource(ctx, resourceRoot+store.FileName(o.cfg.FilePrefix, "recall", old))
	assert.ErrorIs(t, err, ErrResourceNotFound)
	assert.ErrorContains(t, err, "has expired")

	// A symbolic link of a valid name, to a file of the directory and to
	// one outside it.
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret\n"), 0o600))
	for _, target := range []string{path, secret} {
		link := store.FileName(o.cfg.FilePrefix, "link", ourID(o, time.Now()))
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skipf("no symbolic links: %v", err)
		}
		_, err = o.Host().ReadResource(ctx, resourceRoot+link)
		assert.Error(t, err, target)
		assert.NotErrorIs(t, err, ErrResourceNotFound)
		assert.ErrorContains(t, err, "not a regular file")
	}

	// A directory, and a FIFO, which must not hang the read.
	d := store.FileName(o.cfg.FilePrefix, "dir", ourID(o, time.Now()))
	require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o700))
	_, err = o.Host().ReadResource(ctx, resourceRoot+d)
	assert.ErrorContains(t, err, "not a regular file")
	fifo := store.FileName(o.cfg.FilePrefix, "fifo", ourID(o, time.Now()))
	if err := mkfifo(filepath.Join(dir, fifo)); !errors.Is(err, errors.ErrUnsupported) {
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { _, err := o.Host().ReadResource(ctx, resourceRoot+fifo); done <- err }()
		select {
		case err := <-done:
			assert.ErrorContains(t, err, "not a regular file")
		case <-time.After(10 * time.Second):
			t.Fatal("reading a FIFO hung")
		}
	}

	// A file of another Offloader's prefix in the same directory.
	cfg := o.cfg
	cfg.FilePrefix = "other"
	o2, err := New(cfg, WithoutJanitor())
	require.NoError(t, err)
	defer o2.Close()
	otherPath, _ := offloadTickets(t, o2, 50)
	_, err = o.Host().ReadResource(ctx, uriOf(otherPath))
	assert.ErrorIs(t, err, ErrResourceNotFound)
	assert.ErrorContains(t, err, "does not name an offloaded file of this server")
}

func TestOpenResourceOnDirFS(t *testing.T) {
	// The directory FS opens an offloaded file, and says when it is gone.
	o := resourceOffloader(t)
	d := o.opts.fs
	name := store.FileName(o.cfg.FilePrefix, "x", ourID(o, time.Now()))
	require.NoError(t, os.WriteFile(d.Path(name), []byte("{}\n"), 0o600))
	f, err := o.openOffload(name)
	require.NoError(t, err)
	f.Close()
	_, err = o.openOffload("missing")
	assert.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
}

func TestReadResourceMemFS(t *testing.T) {
	m := lrotest.NewMemFS("/mem")
	o := resourceOffloader(t, WithFS(m))
	path, data := offloadTickets(t, o, 50)
	c, err := o.Host().ReadResource(context.Background(), uriOf(path))
	require.NoError(t, err)
	assert.Equal(t, string(data), c.Text)

	link := store.FileName(o.cfg.FilePrefix, "link", ourID(o, time.Now()))
	m.Symlink(link)
	_, err = o.Host().ReadResource(context.Background(), resourceRoot+link)
	assert.ErrorContains(t, err, "not a regular file")
}

func TestResourceLink(t *testing.T) {
	cfg := DefaultConfig()
	cfg.OutputDir = t.TempDir()
	o, err := New(cfg, WithoutJanitor())
	require.NoError(t, err)
	defer o.Close()
	path := o.opts.fs.Path(store.FileName(o.cfg.FilePrefix, "recall", ourID(o, time.Now())))

	assert.Nil(t, o.resourceLink(path, 100, false), "no link before the server serves resources")
	tmpls := o.Host().ServeResources()
	require.Len(t, tmpls, 2)
	assert.Equal(t, "lro://files/atlatl-{operation}-{id}.jsonl", tmpls[0].URITemplate)
	assert.Equal(t, "lro://files/atlatl-{operation}-{id}.jsonl/lines/{range}", tmpls[1].URITemplate)

	l := o.resourceLink(path, 100, false)
	require.NotNil(t, l)
	assert.Equal(t, "lro://files/"+filepath.Base(path), l.URI)
	assert.Equal(t, filepath.Base(path), l.Name)
	assert.Equal(t, "application/jsonl", l.MIMEType)
	assert.Equal(t, int64(100), l.Size)
	assert.NotContains(t, l.Description, "\n")
	assert.Less(t, len(l.Description), 200, "one short line")

	assert.Nil(t, o.resourceLink(filepath.Join(t.TempDir(), filepath.Base(path)), 100, false), "not in the directory")
	assert.Nil(t, o.resourceLink(o.opts.fs.Path("passwd"), 100, false), "not an offloaded file")

	off, err := New(cfg, WithoutJanitor(), WithoutResourceLinks())
	require.NoError(t, err)
	defer off.Close()
	assert.Nil(t, off.Host().ServeResources())
	assert.Nil(t, off.resourceLink(path, 100, false))
}

func TestResourceMaxBytesOption(t *testing.T) {
	for n, want := range map[int64]int64{0: DefaultResourceMaxBytes, -5: extract.MaxResourceRead, 10: textlines.MinBudget, 5000: 5000, 1 << 40: extract.MaxResourceRead} {
		o := resourceOffloader(t, WithResourceMaxBytes(n))
		assert.Equal(t, want, o.resourceMaxBytes(), n)
	}
}

// ourID returns a ULID for t carrying o's name tag, as o's own files have.
func ourID(o *Offloader, t time.Time) ulid.ULID {
	id, err := store.IDFor(o.Name(), t)
	if err != nil {
		panic(err)
	}
	return id
}
