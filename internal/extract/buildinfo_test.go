package extract

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadBuildInfoAsDebugBuildinfo checks readBuildInfo reads Go
// executables as debug/buildinfo.ReadFile does (this test's binary, the go
// tool), and refuses what is not one.
func TestReadBuildInfoAsDebugBuildinfo(t *testing.T) {
	exes := []string{}
	if exe, err := os.Executable(); err == nil {
		exes = append(exes, exe)
	}
	if gt, err := exec.LookPath("go"); err == nil {
		exes = append(exes, gt)
	}
	if len(exes) == 0 {
		t.Skip("no Go executable to read")
	}
	for _, exe := range exes {
		want, err := buildinfo.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readBuildInfo(exe)
		if err != nil {
			t.Fatalf("%s: %v", exe, err)
		}
		if got.String() != want.String() {
			t.Errorf("%s:\n got %s\nwant %s", exe, got, want)
		}
	}

	dir := t.TempDir()
	exe, err := os.ReadFile(exes[0])
	if err != nil {
		t.Fatal(err)
	}
	// The header, found as readBuildInfo finds it, for a copy cut in its
	// strings.
	at := -1
	for i := 0; at < 0; i++ {
		j := bytes.Index(exe[i:], buildInfoMagic)
		if j < 0 {
			t.Fatal("no build information in", exes[0])
		}
		if i += j; func() bool { _, ok := buildInfoAt(bytes.NewReader(exe), int64(i)); return ok }() {
			at = i
		}
	}
	header := []byte("\xff Go buildinf:\x08\x02" + string(make([]byte, 16)))
	for name, content := range map[string][]byte{
		"text":      []byte("#!/bin/sh\necho lro-worker\n"),
		"empty":     nil,
		"magic":     []byte("\xff Go buildinf:"),
		"header":    header,
		"long":      append(header, "\xff\xff\xff\xff\x0f"...),
		"version":   append(header, "\x02go\x05xxxxx"...),
		"truncated": exe[:at+buildInfoHeaderSize+8],
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if bi, err := readBuildInfo(p); err == nil {
			t.Errorf("%s: read %v", name, bi)
		}
	}
	if _, err := readBuildInfo(filepath.Join(dir, "absent")); !os.IsNotExist(err) {
		t.Errorf("absent: %v", err)
	}
}

// TestFindWorkerPassesOverAnotherProgram checks an lro-worker on PATH
// that is not a build of cmd/lro-worker (a script, another Go program) is
// not run, and the note says so and how to install the worker.
func TestFindWorkerPassesOverAnotherProgram(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	goProgram, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"script": []byte("#!/bin/sh\nexit 0\n"), "go program": goProgram} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, workerName), content, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", dir)
		t.Setenv(workerPathEnv, "")
		programs, note := findWorker()
		if len(programs) != 1 || programs[0] != "" {
			t.Errorf("%s: programs %q, want this executable alone", name, programs)
		}
		for _, want := range []string{filepath.Join(dir, workerName) + " is not a build of " + workerPkg, "go install " + workerPkg + "@"} {
			if !strings.Contains(note, want) {
				t.Errorf("%s: the note %q does not say %q", name, note, want)
			}
		}
	}
}
