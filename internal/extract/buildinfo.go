package extract

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// The build information a Go toolchain of 1.18 or later writes into every
// executable: a header that starts with buildInfoMagic, whose flags say the
// strings follow inline, then the Go version and the module information,
// each a varint length and its bytes, the module information framed by
// sentinels of 16 bytes. debug/buildinfo reads it by finding the data
// section of each object format, which links debug/elf, debug/pe,
// debug/macho, debug/plan9obj, debug/dwarf and internal/zstd: 460 KiB of
// every server (issue 33). readBuildInfo looks for the header in the file
// instead, and checks what follows it.
var buildInfoMagic = []byte("\xff Go buildinf:")

const (
	buildInfoHeaderSize = 32
	buildInfoInline     = 0x2 // the header's flags: strings inline (Go 1.18 on)
	buildInfoChunk      = 64 << 10
	// buildInfoMaxString bounds a string of the build information, so
	// that a bogus length reads no more.
	buildInfoMaxString = 1 << 20
)

var errNoBuildInfo = errors.New("not a Go executable of Go 1.18 or later")

// readBuildInfo returns the build information of the Go executable at
// path, as debug/buildinfo.ReadFile does for one built by Go 1.18 or later.
func readBuildInfo(path string) (*debug.BuildInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, buildInfoChunk)
	for off := int64(0); ; {
		n, err := f.ReadAt(buf, off)
		for i := 0; ; i++ {
			j := bytes.Index(buf[i:n], buildInfoMagic)
			if j < 0 {
				break
			}
			i += j
			if bi, ok := buildInfoAt(f, off+int64(i)); ok {
				return bi, nil
			}
		}
		if err != nil || n < len(buildInfoMagic) {
			if err == io.EOF {
				err = errNoBuildInfo
			}
			return nil, err
		}
		// The next chunk starts where a header cut at this one's end would.
		off += int64(n - len(buildInfoMagic) + 1)
	}
}

// buildInfoAt decodes the build information whose header is at off, and
// reports whether it is one (the magic may also be a constant's bytes).
func buildInfoAt(r io.ReaderAt, off int64) (*debug.BuildInfo, bool) {
	header := make([]byte, buildInfoHeaderSize)
	if _, err := r.ReadAt(header, off); err != nil || header[15]&buildInfoInline == 0 {
		return nil, false
	}
	off += buildInfoHeaderSize
	vers, ok := readVarString(r, &off)
	if !ok || !strings.HasPrefix(vers, "go") {
		return nil, false
	}
	mod, ok := readVarString(r, &off)
	if !ok || len(mod) < 33 || mod[len(mod)-17] != '\n' {
		return nil, false
	}
	bi, err := debug.ParseBuildInfo(mod[16 : len(mod)-16])
	if err != nil {
		return nil, false
	}
	bi.GoVersion = vers
	return bi, true
}

// readVarString reads a varint length and that many bytes at *off, and
// moves *off past them.
func readVarString(r io.ReaderAt, off *int64) (string, bool) {
	b := make([]byte, binary.MaxVarintLen64)
	n, _ := r.ReadAt(b, *off)
	length, k := binary.Uvarint(b[:n])
	if k <= 0 || length > buildInfoMaxString {
		return "", false
	}
	s := make([]byte, length)
	if _, err := r.ReadAt(s, *off+int64(k)); err != nil {
		return "", false
	}
	*off += int64(k) + int64(length)
	return string(s), true
}
