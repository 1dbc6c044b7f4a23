package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuickstart runs the README's demo and checks what it prints.
func TestQuickstart(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	s := out.String()
	assert.Contains(t, s, `"offloaded": true`)
	assert.Contains(t, s, `"count": 200`)
	assert.Contains(t, s, "Recipe 1, List titles with namespaces:")
	assert.Contains(t, s, "Recipe 6, Count by namespace:")
	assert.Regexp(t, regexp.MustCompile(`"namespace": "_[a-z]+/[a-z]+",\s+"count": \d+`), s, "recipe 6 ran on the file")
	m := regexp.MustCompile(`inline result:\s+(\d+) bytes`).FindStringSubmatch(s)
	require.NotNil(t, m)
	d := regexp.MustCompile(`descriptor:\s+(\d+) bytes`).FindStringSubmatch(s)
	require.NotNil(t, d)
	assert.Greater(t, len(m[1]), len(d[1]), "the descriptor is smaller than the inline result")
	assert.False(t, strings.Contains(s, "error"))
}
