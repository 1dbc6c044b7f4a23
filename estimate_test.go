package lro_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
)

func estimate(s string) int { return lro.HeuristicEstimator{}.EstimateTokens([]byte(s)) }

func TestEstimateLatinIsCharsOverFour(t *testing.T) {
	assert.Equal(t, 0, estimate(""))
	assert.Equal(t, 1, estimate("a"))
	assert.Equal(t, 1, estimate("abcd"))
	assert.Equal(t, 2, estimate("abcde"))
	assert.Equal(t, 250, estimate(strings.Repeat("x", 1000)))
	// Accented Latin letters are one character each, not two bytes.
	assert.Equal(t, 250, estimate(strings.Repeat("é", 1000)))
	// An ASCII run longer than the 8-byte fast path, with a tail.
	assert.Equal(t, 3, estimate("0123456789a"))
}

func TestEstimateDenseScripts(t *testing.T) {
	zh := "大型结果卸载把工具结果写入文件" // 15 Han characters
	ja := "結果はファイルに書き出されます" // kanji, hiragana, katakana
	ko := "결과를 파일로 보냅니다"
	assert.Equal(t, utf8.RuneCountInString(zh), estimate(zh), "Chinese: one token a character")
	assert.Equal(t, utf8.RuneCountInString(ja), estimate(ja), "Japanese: one token a character")
	// Hangul syllables cost one each; the two spaces a quarter each.
	assert.Equal(t, 11, estimate(ko))
	// Far more than runes/4 would say.
	assert.Greater(t, estimate(zh), 3*utf8.RuneCountInString(zh)/4)

	mixed := "Cache 策略: use LRU ✓" // Latin, Han, a symbol
	// 15 ASCII quarters + 2 Han tokens (8 quarters) + ✓ (2 quarters) = 25 quarters.
	assert.Equal(t, 7, estimate(mixed))

	ru := "Привет мир" // Cyrillic: half a token a letter
	assert.Equal(t, 5, estimate(ru))
	emoji := "🙂🙂"
	assert.Equal(t, 2, estimate(emoji))
}

func TestEstimateNeverAboveOneTokenPerThreeBytes(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("字", 100), strings.Repeat("🙂", 100),
		strings.Repeat("ж", 100), "mixed 字 ж 🙂 text",
	} {
		assert.LessOrEqual(t, estimate(s), (len(s)+2)/3, "%q", s)
	}
	// Invalid UTF-8 arrives as U+FFFD, half a token a byte.
	for _, s := range []string{strings.Repeat("\xff", 100), "mixed 字 ж 🙂 \xfe text"} {
		assert.LessOrEqual(t, estimate(s), (len(s)+1)/2, "%q", s)
	}
	assert.Equal(t, estimate(strings.Repeat("\ufffd", 100)), estimate(strings.Repeat("\xff", 100)), "as the client receives it")
}

func TestEstimatorFunc(t *testing.T) {
	var e lro.Estimator = lro.EstimatorFunc(func(p []byte) int { return len(p) })
	assert.Equal(t, 5, e.EstimateTokens([]byte("hello")))
}
