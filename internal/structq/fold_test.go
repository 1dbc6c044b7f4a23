package structq

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestContainsFoldAgreesWithToLower(t *testing.T) {
	for _, s := range []string{"", "Cache Invalidation", "CACHE", "ca", "xcAchE", "Ünïcödé CACHE", "İstanbul", strings.Repeat("a", 5000) + "B"} {
		for _, needle := range []string{"cache", "c", "ab", "ünï", "i̇stanbul", strings.Repeat("a", 300) + "b", "x"} {
			lower := strings.ToLower(needle)
			assert.Equal(t, strings.Contains(strings.ToLower(s), lower), containsFold(s, lower), "%q in %q", needle, s)
		}
	}
}

func BenchmarkContainsFold(b *testing.B) {
	title := "Security review: Cache invalidation strategy for the API gateway"
	b.Run("fold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			containsFold(title, "quasar")
		}
	})
	b.Run("tolower", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = strings.Contains(strings.ToLower(title), "quasar")
		}
	})
}
