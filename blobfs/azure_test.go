package blobfs_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/blobfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob:// for gocloud's URL mux
)

// azuriteKey is the emulator's well-known account key (devstoreaccount1),
// published with Azurite: it is no secret.
const azuriteKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

var registerAzblob sync.Once

// startAzurite starts Azurite, Microsoft's Azure Blob Storage emulator
// (pinned in testdata/azurite; .ci/run installs it with npm ci), with a
// container, and returns the store URL of prefix in it. It skips the test
// where node or the emulator is not installed.
func startAzurite(t *testing.T, prefix string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: Azurite cannot run")
	}
	bin, err := filepath.Abs(filepath.Join("testdata", "azurite", "node_modules", ".bin", "azurite-blob"))
	require.NoError(t, err)
	if _, err := os.Stat(bin); err != nil {
		t.Skip("Azurite is not installed: run npm ci in blobfs/testdata/azurite")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("cannot listen on loopback: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", fmt.Sprint(port),
		"--inMemoryPersistence", "--silent", "--disableTelemetry", "--skipApiVersionCheck")
	cmd.Dir = t.TempDir()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Azurite did not listen on %s within 30 s: %s", addr, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	query := azblobQuery(addr)
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, "azblob://lro-test"+query)
	require.NoError(t, err)
	defer b.Close()
	var c *container.Client
	require.True(t, b.As(&c))
	_, err = c.Create(ctx, nil)
	require.NoError(t, err)
	return "azblob://lro-test/" + prefix + query
}

// azblobQuery registers azblob:// (TestMain gives the driver the
// emulator's account) and returns the URL query of an emulator at addr.
func azblobQuery(addr string) string {
	registerAzblob.Do(func() { blobfs.Register("azblob") })
	return "?protocol=http&localemu=true&domain=" + addr
}

// A second gocloud driver, end to end against a real emulator: Azure Blob
// Storage (Azurite). Two replicas share a prefix: an offload on one is
// read by lro_extract and resources/read on the other; the create-only
// upload, the expiry in the metadata, the janitors racing on one file
// (removed once) and a store that is down (a plain warning) hold as on S3.
func TestStoreAzureBlobReplicas(t *testing.T) {
	t.Parallel() // it mostly waits for Azurite and for the expiry
	u := startAzurite(t, "team/lro")
	var evA, evB events
	a := offloader(t, u, 1, &evA, lro.WithoutJanitor())
	b := offloader(t, u, 3600, &evB, lro.WithoutJanitor())

	out := offload(t, a, 300)
	require.Equal(t, lro.Offloaded, out.Action, "%v", out.Err)
	d := out.Response
	assert.Regexp(t, `^azblob://lro-test/team/lro/atlatl-recall-[0-9A-Z]{26}\.jsonl$`, d.FilePath)
	assert.NotContains(t, d.FilePath, "127.0.0.1")
	text, err := b.Extract(context.Background(), map[string]any{"file_path": d.FilePath, "query": `select(.id == "m00042") | .title`})
	require.NoError(t, err)
	assert.Contains(t, text, "memory number 42 about deployment")
	name := d.FilePath[strings.LastIndexByte(d.FilePath, '/')+1:]
	rc, err := b.Host().ReadResource(context.Background(), "lro://files/"+name+"/lines/2-2")
	require.NoError(t, err)
	assert.Contains(t, rc.Text, `"id":"m00000"`)

	// Create-only: a name taken is fs.ErrExist.
	f, err := blobfs.Open(context.Background(), u)
	require.NoError(t, err)
	defer f.Close()
	write(t, f, ".x.tmp", "first")
	require.NoError(t, f.Rename(".x.tmp", "x.jsonl"))
	write(t, f, ".y.tmp", "second")
	assert.Error(t, f.Rename(".y.tmp", "x.jsonl"))
	assert.Equal(t, "first", read(t, f, "x.jsonl"))

	// The expiry travels in the metadata: b (TTL 1 h) deletes a's file
	// (TTL 1 s) once it expired; both sweep at once, and it is removed
	// once.
	sleepPastExpiry(t, f, name)
	var wg sync.WaitGroup
	for _, o := range []*lro.Offloader{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); _, err := o.Sweep(context.Background()); assert.NoError(t, err) }()
	}
	wg.Wait()
	_, _, ea := evA.counts()
	_, _, eb := evB.counts()
	assert.Equal(t, 1, ea+eb, "removed once across replicas")
	_, err = b.Extract(context.Background(), map[string]any{"file_path": d.FilePath, "recipe": 1})
	assert.ErrorContains(t, err, "no longer exists")
}

// A store that is down, on the second driver: the fallback's warning
// is plain, the event has the error. Nothing listens at the address, so
// the emulator is not started. The Azure SDK retries a refused
// connection after seconds: the timeout ends the offload before it.
func TestStoreAzureBlobDownFallsBack(t *testing.T) {
	down := "azblob://lro-test/lro" + azblobQuery("127.0.0.1:1") + "&timeout=300ms"
	var ev events
	o := offloader(t, down, 3600, &ev, lro.WithoutJanitor())
	out := offload(t, o, 300)
	require.Equal(t, lro.Truncated, out.Action)
	assert.NotContains(t, out.Warning, "127.0.0.1")
	assert.Contains(t, out.Warning, "call the tool again later")
	require.Error(t, out.Err)
	assert.False(t, errors.Is(out.Err, context.Canceled))
}
