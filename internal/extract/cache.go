package extract

import (
	"slices"
	"sync"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/recipes"
)

// recordCache keeps the decoded records of the files queried in this
// process (when queries do not run in workers, which keep their own):
// each file is decoded once, however many calls want it.
type recordCache = extractworker.FileCache

func newRecordCache(budget int64) *recordCache { return extractworker.NewFileCache(budget) }

// queryCache keeps the recipes compiled in this process.
type queryCache = extractworker.QueryCache

// recipeMemo keeps the recipes inferred from generic files, by file key:
// inferring them reads up to inferSample records, more than a query of a
// cached file costs. Files never change once published.
type recipeMemo struct {
	mu    sync.Mutex
	byKey map[string][]recipes.Recipe
	order []string // oldest first
}

// maxMemoRecipes bounds the files whose recipes are kept.
const maxMemoRecipes = 64

var genericRecipes recipeMemo

func (m *recipeMemo) get(key string) ([]recipes.Recipe, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rs, ok := m.byKey[key]
	return rs, ok
}

func (m *recipeMemo) put(key string, rs []recipes.Recipe) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byKey == nil {
		m.byKey = map[string][]recipes.Recipe{}
	}
	if _, ok := m.byKey[key]; ok {
		return
	}
	if len(m.order) >= maxMemoRecipes {
		delete(m.byKey, m.order[0])
		m.order = slices.Delete(m.order, 0, 1)
	}
	m.byKey[key] = rs
	m.order = append(m.order, key)
}
