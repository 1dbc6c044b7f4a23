package proxy

import (
	"encoding/json"
	"strings"

	"github.com/mcplro/lro/host"
)

// The messages of a prompt (prompts/get) and of a sampling request, read
// as items for the gate and put back together from what it returns.

// messages are the messages of a prompt or of a sampling request, and
// the text before them (its description, its systemPrompt), as the gate
// judges them: the lead text first, then each content block in order.
type messages struct {
	msgs   []map[string]json.RawMessage
	blocks [][]json.RawMessage // each message's content blocks
	refs   []msgRef            // by slot
	items  []host.Content      // what the gate judges, by slot
}

// msgRef is where an item of messages comes from: msg -1 is the lead
// text; part -1 is a message whose content is one block, not an array.
type msgRef struct{ msg, part int }

// readMessages reads raw, a JSON array of messages, after the text lead
// (none when empty).
func readMessages(lead string, raw json.RawMessage) *messages {
	m := &messages{}
	_ = json.Unmarshal(raw, &m.msgs)
	if lead != "" {
		m.refs = append(m.refs, msgRef{-1, -1})
		m.items = append(m.items, host.Content{Text: lead, Other: slot(0)})
	}
	for i, msg := range m.msgs {
		c := msg["content"]
		var parts []json.RawMessage
		if t := strings.TrimSpace(string(c)); strings.HasPrefix(t, "[") && json.Unmarshal(c, &parts) == nil {
			for j, part := range parts {
				m.refs = append(m.refs, msgRef{i, j})
				m.items = append(m.items, blockItem(part, slot(len(m.items))))
			}
		} else {
			parts = []json.RawMessage{c}
			m.refs = append(m.refs, msgRef{i, -1})
			m.items = append(m.items, blockItem(c, slot(len(m.items))))
		}
		m.blocks = append(m.blocks, parts)
	}
	return m
}

// rebuild returns the messages of what the gate made of m's items (out),
// and the lead text as the gate left it (nil: left out). The messages
// kept keep their roles and other members; a block cut becomes a text
// block; each text or link of the gate's own becomes what own makes of
// it (nothing when own returns nil).
func (m *messages) rebuild(out []host.Content, own func(gatedItem) map[string]json.RawMessage) (lead *string, msgs []map[string]json.RawMessage) {
	open := -1 // the message of m whose blocks the last message gathers
	for _, g := range gatedItems(m.items, out) {
		if g.slot < 0 {
			if msg := own(g); msg != nil {
				msgs = append(msgs, msg)
				open = -1
			}
			continue
		}
		rf := m.refs[g.slot]
		if rf.msg < 0 {
			text := g.text
			lead = &text
			continue
		}
		block := m.blocks[rf.msg][max(rf.part, 0)]
		if g.cut {
			block = textBlock(g.text)
		}
		if rf.part < 0 {
			msg := cloneMap(m.msgs[rf.msg])
			msg["content"] = block
			msgs = append(msgs, msg)
			open = -1
			continue
		}
		if open != rf.msg {
			msg := cloneMap(m.msgs[rf.msg])
			msg["content"] = json.RawMessage(`[]`)
			msgs = append(msgs, msg)
			open = rf.msg
		}
		last := msgs[len(msgs)-1]
		var parts []json.RawMessage
		_ = json.Unmarshal(last["content"], &parts)
		last["content"], _ = json.Marshal(append(parts, block))
	}
	if msgs == nil {
		msgs = []map[string]json.RawMessage{}
	}
	return lead, msgs
}

// userMessage is a user message whose content is block.
func userMessage(block json.RawMessage) map[string]json.RawMessage {
	return map[string]json.RawMessage{"role": json.RawMessage(`"user"`), "content": block}
}
