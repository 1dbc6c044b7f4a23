package tmpl

// The nodes Parse builds and Render walks. A template is a list of nodes,
// each a textNode, a *pipeNode (an action printing its value) or a
// *branchNode.

// node is a textNode, a *pipeNode or a *branchNode.
type node any

// textNode is text printed as it is.
type textNode string

// branchNode is {{if}} or {{with}}, with its {{else}} (else if, else
// with: an elseList of one branchNode).
type branchNode struct {
	with           bool
	pipe           *pipeNode
	list, elseList []node
}

// pipeNode is a pipeline: commands joined by |, each one's value the last
// argument of the next.
type pipeNode struct {
	pos, end int // its text, for errors
	cmds     []*command
}

// command is a function's name and its arguments, or a single operand.
type command struct {
	args []*operand
}

// operandKind is what an operand is.
type operandKind int

const (
	dotOperand    operandKind = iota // . or .X.Y: dot, then names
	rootOperand                      // $ or $.X: the data, then names
	callOperand                      // a function's name (called with no arguments if not first), then names
	pipeOperand                      // (pipeline), then names
	boolOperand                      // true, false
	numberOperand                    // 1, 1.5, 'a'
	stringOperand                    // "s", `s`
)

// operand is an argument of a command.
type operand struct {
	kind     operandKind
	pos, end int      // its text, for errors
	names    []string // the fields looked up in turn from its value
	name     string   // callOperand: the function
	pipe     *pipeNode
	b        bool
	s        string
	num      number
}

// number is a numeric constant, as text/template's parser reads it:
// isInt when it is an int64 exactly (1, 1.0, 'a', 1e3, not 1.5 nor
// 1<<63), and float its value as a float64.
type number struct {
	isInt bool
	int   int64
	float float64
}
