package memstore

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// genEpoch anchors generated timestamps so output never depends on the
// wall clock; memories spread over the two years before it.
var genEpoch = time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC).Unix()

const (
	genSpan      = 730 * 86400
	maxEditDelay = 180 * 86400
)

// Generate fabricates n plausible memories so demos and benchmarks get
// realistic payloads (about 680 bytes of compact JSON each) that are
// byte-for-byte reproducible for a given n and seed. A prefix of a larger
// generation equals a smaller one with the same seed.
func Generate(n int, seed uint64) []Memory {
	if n <= 0 {
		return []Memory{}
	}
	g := generator{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	mems := make([]Memory, n)
	for i := range mems {
		g.fill(&mems[i], mems[:i])
	}
	return mems
}

type generator struct {
	r  *rand.Rand
	sb strings.Builder
	// per-memory vocabulary picks, reused by every template of the memory
	topic                                        *topic
	subject, tech, comp, fail, action, pat, team string
	clock                                        string
}

func (g *generator) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *generator) chance(p float64) bool { return g.r.Float64() < p }

// fill writes one memory; prev holds the memories generated so far, which
// relationships point at so every target exists.
func (g *generator) fill(m *Memory, prev []Memory) {
	r := g.r
	mt := &memoryTypes[r.IntN(len(memoryTypes))]
	ns := &mt.namespaces[r.IntN(len(mt.namespaces))]
	g.topic = &topics[r.IntN(len(topics))]
	g.subject = g.pick(g.topic.subjects)
	g.tech = g.pick(g.topic.techs)
	g.comp = g.pick(components)
	g.fail = g.pick(failures)
	g.action = g.pick(actions)
	g.pat = g.pick(patterns)
	g.team = g.pick(teams)
	g.clock = twoDigits(r.IntN(24)) + ":" + twoDigits(r.IntN(60))

	created := genEpoch - r.Int64N(genSpan)
	modified := created
	if g.chance(0.7) {
		modified += r.Int64N(min(genEpoch-created, maxEditDelay) + 1)
	}

	m.ID = g.ulid(created)
	m.MemoryType = mt.name
	m.Title = g.expand(g.pick(ns.titles))
	m.Namespace = ns.namespace
	m.Tags = g.tags()
	m.Created = rfc3339(created)
	m.Modified = rfc3339(modified)
	m.Status = "active"
	if g.chance(0.12) {
		m.Status = "archived"
	}
	m.Content = g.content()
	m.Summary = g.expand(g.pick(summaries))

	m.Entities = []Entity{{Name: g.tech, Type: "technology"}}
	if g.chance(0.1) {
		m.Entities = append(m.Entities, Entity{Name: g.comp, Type: "component"})
	}
	if len(prev) > 0 && g.chance(0.1) {
		m.Relationships = []Relationship{{Type: g.pick(relTypes), Target: prev[r.IntN(len(prev))].ID}}
	}
	if g.chance(0.15) {
		m.WikiLinks = []string{"[[" + g.tech + "]]"}
	}
	m.Provenance = Provenance{
		Confidence: float64(50+r.IntN(51)) / 100,
		TrustLevel: g.pick(trustLevels),
		SourceType: g.pick(sourceTypes),
		Agent:      g.pick(agents),
	}
	m.Temporal = Temporal{
		ValidFrom: m.Created,
		Decay: Decay{
			Model:        "exponential",
			HalfLifeDays: mt.halfLife/2 + r.IntN(mt.halfLife+1),
			Strength:     float64(30+r.IntN(71)) / 100,
		},
	}
	if g.chance(0.1) {
		m.Temporal.ValidUntil = rfc3339(created + int64(90+r.IntN(631))*86400)
	}
	if g.chance(0.08) {
		m.Temporal.TTLSeconds = (7 + r.IntN(359)) * 86400
	}
	if g.chance(0.06) {
		m.Extensions = map[string]any{"atlatl": map[string]any{"priority": g.pick(priorities)}}
	}
	if g.chance(0.04) {
		m.Citations = []Citation{{Title: g.tech + " documentation", URL: citationHost + slug(g.tech)}}
	}
}

func (g *generator) tags() []string {
	tags := make([]string, 1, 4)
	tags[0] = g.topic.tag
	for extra := max(g.r.IntN(4)-1, 0); extra > 0; extra-- {
		t := topics[g.r.IntN(len(topics))].tag
		dup := false
		for _, have := range tags {
			dup = dup || have == t
		}
		if !dup {
			tags = append(tags, t)
		}
	}
	return tags
}

func (g *generator) content() string {
	n := 1
	if g.chance(0.15) {
		n = 2
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.expand(g.pick(contentSentences))
	}
	return strings.Join(parts, " ")
}

// expand substitutes the placeholders documented on nsSpec, plus {M} for a
// team, {K} for a fresh number and {Q} for a fresh percentage.
func (g *generator) expand(tmpl string) string {
	sb := &g.sb
	sb.Reset()
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 || i+2 >= len(tmpl) {
			sb.WriteString(tmpl)
			return sb.String()
		}
		sb.WriteString(tmpl[:i])
		switch tmpl[i+1] {
		case 'N':
			sb.WriteString(g.topic.noun)
		case 'n':
			sb.WriteString(g.topic.tag)
		case 'S':
			sb.WriteString(g.subject)
		case 'T':
			sb.WriteString(g.tech)
		case 'C':
			sb.WriteString(g.comp)
		case 'F':
			sb.WriteString(g.fail)
		case 'A':
			sb.WriteString(g.action)
		case 'P':
			sb.WriteString(g.pat)
		case 'M':
			sb.WriteString(g.team)
		case 'H':
			sb.WriteString(g.clock)
		case 'K':
			sb.WriteString(strconv.Itoa(5 + g.r.IntN(495)))
		case 'Q':
			sb.WriteString(strconv.Itoa(5 + g.r.IntN(90)))
		}
		tmpl = tmpl[i+3:]
	}
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ulid builds a ULID-shaped id (48-bit millisecond time, 80 random bits)
// so ids sort roughly by creation like real atlatl ids.
func (g *generator) ulid(unixSec int64) string {
	var b [26]byte
	ms := uint64(unixSec) * 1000
	for i := 9; i >= 0; i-- {
		b[i] = crockford[ms&31]
		ms >>= 5
	}
	hi, lo := g.r.Uint64(), g.r.Uint64()
	for i := 10; i < 26; i++ {
		if i < 18 {
			b[i] = crockford[hi&31]
			hi >>= 5
		} else {
			b[i] = crockford[lo&31]
			lo >>= 5
		}
	}
	return string(b[:])
}

func rfc3339(unixSec int64) string {
	return time.Unix(unixSec, 0).UTC().Format(time.RFC3339)
}

func twoDigits(v int) string {
	return string([]byte{byte('0' + v/10), byte('0' + v%10)})
}

func slug(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), " ", "-")
}
