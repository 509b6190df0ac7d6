package labs

import "text/template/parse"

// ctxWalker walks a shell-context template the way it renders, with the
// shell lexer, and reports every value that would be refused: the lint
// twin of autoquote. Branches of {{if}}, {{with}} and {{range}} must leave
// the command in the same context, as html/template requires, so that one
// reading of the template holds whichever branch runs.
type ctxWalker struct{ *refWalker }

// lintPlaceholder stands for a value at lint time: it holds no newline and,
// being a NUL, never makes a here-document line equal its delimiter.
const lintPlaceholder = "\x00"

func (w *ctxWalker) list(n *parse.ListNode, l *shLexer) *shLexer {
	if n == nil {
		return l
	}
	for _, c := range n.Nodes {
		l = w.node(c, l)
	}
	return l
}

func (w *ctxWalker) node(n parse.Node, l *shLexer) *shLexer {
	switch n := n.(type) {
	case *parse.TextNode:
		l.writeText(string(n.Text))
	case *parse.ActionNode:
		if len(n.Pipe.Decl) > 0 {
			return l
		}
		if _, err := l.context(); err != nil {
			w.p.errAt(w.file, w.lineOf(n.Pos), "%s: %s: %v", w.what, n, err)
		}
		l.afterValue(lintPlaceholder)
	case *parse.IfNode:
		return w.branches(&n.BranchNode, "if", l)
	case *parse.WithNode:
		return w.branches(&n.BranchNode, "with", l)
	case *parse.RangeNode:
		body := w.list(n.List, l.clone())
		if body.key() != l.key() {
			w.p.errAt(w.file, w.lineOf(n.Pos), "%s: the body of this {{range}} ends in a different shell context than it starts in (an unclosed quote, $( or here-document): close it inside the loop", w.what)
		}
		if n.ElseList != nil {
			if e := w.list(n.ElseList, l.clone()); e.key() != l.key() {
				w.p.errAt(w.file, w.lineOf(n.Pos), "%s: the {{else}} of this {{range}} ends in a different shell context than it starts in: close its quotes inside it", w.what)
			}
		}
		return body
	}
	return l
}

func (w *ctxWalker) branches(n *parse.BranchNode, what string, l *shLexer) *shLexer {
	a := w.list(n.List, l.clone())
	b := w.list(n.ElseList, l.clone())
	if a.key() != b.key() {
		w.p.errAt(w.file, w.lineOf(n.Pos), "%s: the branches of this {{%s}} leave the command in different shell contexts (one opens a quote, $( or here-document the other does not): close it inside each branch", w.what, what)
	}
	return a
}
