package lro

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/store"
	"github.com/mcplro/lro/internal/testenv"
)

// FuzzReadResource reads arbitrary URIs and line ranges of a directory that
// holds, besides an offloaded file, a file of another prefix, and a
// symbolic and a hard link under valid names to a secret outside it: no
// panic, every read ends by its deadline, and only the offloaded file is
// ever served.
//
//	go test -run '^$' -fuzz FuzzReadResource -fuzztime 60s
func FuzzReadResource(f *testing.F) {
	o := resourceOffloader(f, WithResourceMaxBytes(4096), WithExtractLimits(ExtractLimits{Timeout: 2 * time.Second}))
	path, data := offloadTickets(f, o, 300)
	good := filepath.Base(path)
	dir := filepath.Dir(path)
	secret := filepath.Join(f.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("SECRET line one\nSECRET line two\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	symlink := store.FileName(o.cfg.FilePrefix, "sym", ourID(o, time.Now()))
	hardlink := store.FileName(o.cfg.FilePrefix, "hard", ourID(o, time.Now()))
	other := "other-tickets-" + ourID(o, time.Now()).String() + ".jsonl"
	_ = os.Symlink(secret, filepath.Join(dir, symlink))
	_ = os.Link(secret, filepath.Join(dir, hardlink))
	if err := os.WriteFile(filepath.Join(dir, other), []byte("SECRET other\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	names := []string{good, symlink, hardlink, other, "../" + good, good + "/../" + good, strings.ToUpper(good)}

	f.Add("", "1-5", 0)
	f.Add("", "100-", 0)
	f.Add("", "999999999", 1)
	f.Add("", "0", 2)
	f.Add("", "5-3", 3)
	f.Add("/lines/1", "", 4)
	f.Add("%2e%2e/secret", "1", 5)
	f.Add("lro://files/"+good+"\x00", "", 6)
	f.Add("lro://files/"+good+"/lines/1-2/lines/3", "1", 0)
	f.Fuzz(func(t *testing.T, raw, rng string, pick int) {
		if len(raw) > 2048 || len(rng) > 256 {
			return
		}
		name := names[(pick%len(names)+len(names))%len(names)]
		uris := []string{raw, resourceRoot + name + raw, resourceRoot + name + resourceLines + rng}
		for _, uri := range uris {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			start := time.Now()
			c, err := o.Host().ReadResource(ctx, uri)
			cancel()
			if d := time.Since(start); testenv.Hung(d, 5*time.Second) {
				t.Fatalf("%.200q took %v", uri, d)
			}
			if err != nil {
				if len(err.Error()) > 4096 {
					t.Fatalf("%.200q: an error of %d bytes", uri, len(err.Error()))
				}
				continue
			}
			if strings.Contains(c.Text, "SECRET") {
				t.Fatalf("%.200q served a file that is not an offloaded file of ours", uri)
			}
			if !strings.HasPrefix(uri, resourceRoot+good) || c.URI != uri {
				t.Fatalf("%.200q served, which does not name %s", uri, good)
			}
			if body, _, _ := strings.Cut(c.Text, "[lro:"); !strings.Contains(string(data), body) {
				t.Fatalf("%.200q: the text is not the file's", uri)
			}
		}
	})
}
