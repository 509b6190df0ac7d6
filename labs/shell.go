package labs

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// A shell-context template's values are quoted for the place they land in
// the command, the way html/template escapes by HTML context: a small shell
// lexer reads the template's literal text as it renders and knows, at each
// {{...}}, whether the value is a bare word, inside "double quotes", inside
// 'single quotes' or inside a here-document body. Where no quoting makes a
// value safe (a comment, $(( )), backticks, ${...}, a here-document
// delimiter) the value is refused, at lint with file:line and at render.
//
// The lexer follows what dash and bash agree on. Where they differ, or where
// it cannot be sure what the shell will make of the text (a case inside
// $( ), an expansion inside a here-document, a continued here-document
// line), it stops trusting its own reading and refuses every value after
// that point: a refused value is an error the author can fix, a misread
// context is a hole.

// shellCtx is where a value lands.
type shellCtx uint8

const (
	ctxBare         shellCtx = iota // a word, or part of one, at command level
	ctxDouble                       // inside "..."
	ctxSingle                       // inside '...'
	ctxHereQuoted                   // in the body of <<'EOF': literal
	ctxHereUnquoted                 // in the body of <<EOF: like "..." without the quotes
)

func (c shellCtx) String() string {
	switch c {
	case ctxBare:
		return "bare word"
	case ctxDouble:
		return "double quotes"
	case ctxSingle:
		return "single quotes"
	case ctxHereQuoted:
		return "quoted here-document"
	case ctxHereUnquoted:
		return "unquoted here-document"
	}
	return "unknown"
}

// frameKind is one level of the lexer's nesting.
type frameKind uint8

const (
	fCmd      frameKind = iota // command level: the whole command, or $( ) inside it
	fDouble                    // "..."
	fSingle                    // '...'
	fANSI                      // bash's $'...'
	fBacktick                  // `...`
	fParam                     // ${...}
	fArith                     // $(( )) or $[ ]
	fComment                   // # to the end of the line
	fHeredoc                   // a here-document's body
)

// heredoc is a here-document announced by << whose body has not started.
type heredoc struct {
	delim     string
	quoted    bool // any quoting in the delimiter word: the body is literal
	stripTabs bool // <<-
}

type frame struct {
	kind frameKind
	// sub marks a fCmd opened by $( ): its ")" closes it.
	sub bool
	// depth counts open parentheses (fCmd, fArith) or braces (fParam).
	depth int
	// bracket marks a fArith opened by $[ (closed by ]).
	bracket bool
	// pending are here-documents whose bodies start at the next newline
	// of this fCmd.
	pending []heredoc
	// Here-document body state.
	doc          heredoc
	line         []byte
	lineHasValue bool
}

// delimWord is the word after << being read.
type delimWord struct {
	stripTabs bool
	started   bool
	quoted    bool
	inSingle  bool
	inDouble  bool
	esc       bool
	dqEsc     bool
	word      []byte
}

// shLexer tracks the shell context of a command as its text goes by.
type shLexer struct {
	stack []frame
	// lost is why values are refused from here on ("" while the lexer is
	// sure of the context).
	lost string
	// The byte just read was an unescaped backslash, an unescaped $, or
	// part of a $NAME.
	esc, dollar, dollarName bool
	// justOpened: the previous bytes were "$(", so a "(" makes it "$((".
	justOpened bool
	// lt counts the "<" just read (2 announces a here-document).
	lt int
	// prevParen: the previous byte was an unescaped "(" at command level.
	prevParen bool
	// wordStart: the next byte at command level starts a word (so # starts
	// a comment and a value is a whole word).
	wordStart bool
	// tilde: the previous byte was an unquoted ~ at command level, so a
	// bare value would become a login name (~root).
	tilde bool
	// word is the current word at command level, kept only while short
	// enough to be a reserved word.
	word []byte
	hd   *delimWord
	// fail is set when literal text completes a here-document line that a
	// value made equal to the delimiter: the render must fail.
	fail error
}

func newShLexer() *shLexer {
	return &shLexer{stack: []frame{{kind: fCmd}}, wordStart: true}
}

// clone returns an independent copy, for lint's walk over both branches of
// an {{if}}.
func (l *shLexer) clone() *shLexer {
	c := *l
	c.stack = make([]frame, len(l.stack))
	for i, f := range l.stack {
		f.pending = append([]heredoc(nil), f.pending...)
		f.line = append([]byte(nil), f.line...)
		c.stack[i] = f
	}
	c.word = append([]byte(nil), l.word...)
	if l.hd != nil {
		hd := *l.hd
		hd.word = append([]byte(nil), l.hd.word...)
		c.hd = &hd
	}
	return &c
}

// key summarises the state that decides how later values are quoted, to
// compare the states two branches of a template end in.
func (l *shLexer) key() string {
	var b strings.Builder
	for _, f := range l.stack {
		fmt.Fprintf(&b, "%d/%v/%d/%d/%q/%v;", f.kind, f.sub, f.depth, len(f.pending), f.doc.delim, f.doc.quoted)
	}
	fmt.Fprintf(&b, "%q %v%v%v%v%d%v", l.lost, l.esc, l.dollar, l.dollarName, l.justOpened, l.lt, l.hd != nil)
	return b.String()
}

func (l *shLexer) top() *frame { return &l.stack[len(l.stack)-1] }

// Bounds on the lexer's state, so that lint (which copies it at every
// {{if}}) stays linear in the template's size whatever the text.
const (
	maxShellNesting     = 64
	maxPendingHeredocs  = 16
	maxHeredocDelimiter = 1024
)

func (l *shLexer) push(f frame) {
	if len(l.stack) >= maxShellNesting {
		l.lose(fmt.Sprintf("more than %d nested quotes and substitutions", maxShellNesting))
		return
	}
	l.stack = append(l.stack, f)
}

func (l *shLexer) pop() {
	if len(l.top().pending) > 0 {
		l.lose("a $( ) that ends on the line of its << here-document (shells differ on where the body is)")
	}
	if len(l.stack) > 1 {
		l.stack = l.stack[:len(l.stack)-1]
	}
}

func (l *shLexer) lose(why string) {
	if l.lost == "" {
		l.lost = why
	}
}

// pendingAnywhere reports whether a here-document waits for its body in
// any frame: a newline inside quotes then may or may not start it,
// depending on the shell.
func (l *shLexer) pendingAnywhere() bool {
	for _, f := range l.stack {
		if len(f.pending) > 0 {
			return true
		}
	}
	return l.hd != nil
}

// writeText feeds literal template text.
func (l *shLexer) writeText(s string) {
	for i := 0; i < len(s) && l.lost == ""; i++ {
		l.byte(s[i])
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// isMeta reports the bytes that end an unquoted word.
func isMeta(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
		return true
	}
	return false
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isNameByte(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' }

// dollarFollow handles the byte after an unescaped $ in a context where
// expansions happen; it reports whether it consumed the byte.
func (l *shLexer) dollarFollow(c byte, inCmd bool) bool {
	l.dollar = false
	switch {
	case c == '(':
		l.push(frame{kind: fCmd, sub: true})
		l.justOpened = true
		l.wordStart = true
		l.word = l.word[:0]
		return true
	case c == '{':
		l.push(frame{kind: fParam, depth: 1})
		return true
	case c == '[':
		l.push(frame{kind: fArith, bracket: true, depth: 1})
		return true
	case inCmd && c == '\'':
		// bash reads $'a\'b' as one string, sh as $ then 'a\' then b':
		// the two disagree on everything after it.
		l.push(frame{kind: fANSI})
		l.lose("$'...' (bash reads backslashes in it, sh does not): write '...' or \"...\"")
		return true
	case inCmd && c == '"':
		l.push(frame{kind: fDouble})
		return true
	case isNameStart(c):
		l.dollarName = true
		return false
	}
	return false
}

func (l *shLexer) byte(c byte) {
	f := l.top()
	switch f.kind {
	case fCmd:
		l.cmdByte(c)
	case fDouble:
		if l.esc {
			l.esc = false
			return
		}
		if l.dollar && l.dollarFollow(c, false) {
			return
		}
		if l.dollarName && !isNameByte(c) {
			l.dollarName = false
		}
		switch c {
		case '\\':
			l.esc = true
		case '"':
			l.pop()
			l.wordStart = false
		case '`':
			l.push(frame{kind: fBacktick})
		case '$':
			l.dollar = true
		case '\n':
			if l.pendingAnywhere() {
				l.lose("a newline inside quotes on the line of a << here-document (shells differ on where its body starts)")
			}
		}
	case fSingle:
		switch c {
		case '\'':
			l.pop()
			l.wordStart = false
		case '\n':
			if l.pendingAnywhere() {
				l.lose("a newline inside quotes on the line of a << here-document (shells differ on where its body starts)")
			}
		}
	case fANSI, fBacktick:
		closer := byte('\'')
		if f.kind == fBacktick {
			closer = '`'
		}
		switch {
		case l.esc:
			l.esc = false
		case c == '\\':
			l.esc = true
		case c == closer:
			l.pop()
			l.wordStart = false
		}
	case fParam:
		switch {
		case l.esc:
			l.esc = false
		case c == '\\':
			l.esc = true
		case c == '{':
			f.depth++
		case c == '}':
			f.depth--
			if f.depth == 0 {
				l.pop()
				l.wordStart = false
			}
		case c == '\'' || c == '"' || c == '`' || c == '$':
			// Shells disagree on quotes inside "${...}"; rather than guess
			// where it ends, stop trusting the context.
			l.lose("quotes or expansions inside ${...} (shells differ on how they are read)")
		}
	case fArith:
		open, closer := byte('('), byte(')')
		if f.bracket {
			open, closer = '[', ']'
		}
		switch c {
		case '\'', '"', '`', '\\':
			l.lose("quotes or backslashes inside $(( )) (shells differ on how they are read)")
		case open:
			f.depth++
		case closer:
			f.depth--
			if f.depth == 0 {
				l.pop()
				l.wordStart = false
			}
		}
	case fComment:
		if c == '\n' {
			l.pop()
			l.byte(c)
		}
	case fHeredoc:
		l.heredocByte(f, c)
	}
}

func (l *shLexer) cmdByte(c byte) {
	f := l.top()
	if l.hd != nil {
		if l.delimByte(c) {
			return
		}
	}
	if l.esc {
		l.esc = false
		l.wordStart = false
		l.addWord(c)
		return
	}
	if l.lt == 2 {
		l.lt = 0
		switch c {
		case '<': // <<< is a here-string, not a here-document
			return
		case '-':
			l.hd = &delimWord{stripTabs: true}
			return
		}
		l.hd = &delimWord{}
		if l.delimByte(c) {
			return
		}
	}
	if c == '<' && l.lt == 1 {
		l.lt = 2
		return
	}
	l.lt = 0
	if l.justOpened {
		l.justOpened = false
		if c == '(' {
			f.kind, f.sub, f.depth = fArith, false, 2
			return
		}
	}
	if l.dollar && l.dollarFollow(c, true) {
		return
	}
	if l.dollarName && !isNameByte(c) {
		l.dollarName = false
	}
	paren := false
	l.tilde = c == '~'
	switch c {
	case '\\':
		l.esc = true
		l.wordStart = false
	case '\'':
		l.push(frame{kind: fSingle})
		l.wordStart = false
	case '"':
		l.push(frame{kind: fDouble})
		l.wordStart = false
	case '`':
		l.push(frame{kind: fBacktick})
		l.wordStart = false
	case '$':
		l.dollar = true
		l.wordStart = false
	case '#':
		if l.wordStart {
			l.push(frame{kind: fComment})
			return
		}
		l.addWord(c)
	case '<':
		l.endWord()
		l.lt = 1
	case '(':
		l.endWord()
		if l.prevParen {
			l.lose(`"((" (bash reads it as arithmetic, sh as two subshells): write "( (" or $(( ))`)
		}
		f.depth++
		paren = true
	case ')':
		l.endWord()
		if f.depth == 0 && f.sub {
			l.pop()
			l.wordStart = false
			return
		}
		if f.depth > 0 {
			f.depth--
		}
	case '\n':
		l.endWord()
		if len(f.pending) == 0 && l.pendingAnywhere() {
			l.lose("a newline inside $( ) on the line of a << here-document (shells differ on where its body starts)")
		}
		if len(f.pending) > 0 {
			doc := f.pending[0]
			f.pending = f.pending[1:]
			l.push(frame{kind: fHeredoc, doc: doc})
		}
	case ' ', '\t', ';', '&', '|', '>':
		l.endWord()
	default:
		l.wordStart = false
		l.addWord(c)
	}
	l.prevParen = paren
}

// addWord grows the current command-level word.
func (l *shLexer) addWord(c byte) {
	if len(l.word) < 8 {
		l.word = append(l.word, c)
	} else {
		l.word = append(l.word[:0], 0) // too long to be a reserved word
	}
}

// endWord ends the current word: a case inside $( ) has patterns whose ")"
// the lexer would take for the end of the $( ).
func (l *shLexer) endWord() {
	if string(l.word) == "case" && l.inSub() {
		l.lose(`a case inside $( ) (its patterns' ")" cannot be told from the end of the $( ) here): move the case out of the $( )`)
	}
	l.word = l.word[:0]
	l.wordStart = true
}

func (l *shLexer) inSub() bool {
	for _, f := range l.stack {
		if f.kind == fCmd && f.sub {
			return true
		}
	}
	return false
}

// delimByte reads the delimiter word after << or <<-; it reports whether
// it consumed c (false: the word ended and c is command text again).
func (l *shLexer) delimByte(c byte) bool {
	d := l.hd
	switch {
	case d.esc:
		d.esc = false
		d.word = append(d.word, c)
	case d.inSingle:
		if c == '\'' {
			d.inSingle = false
		} else {
			d.word = append(d.word, c)
		}
	case d.dqEsc:
		// In "...", a backslash quotes only $ ` " \ and newline; before
		// anything else it stays.
		d.dqEsc = false
		if !strings.ContainsRune("$`\"\\\n", rune(c)) {
			d.word = append(d.word, '\\')
		}
		d.word = append(d.word, c)
	case d.inDouble:
		switch c {
		case '"':
			d.inDouble = false
		case '\\':
			d.dqEsc = true
		default:
			d.word = append(d.word, c)
		}
	case isBlank(c) && !d.started:
		return true
	case isMeta(c):
		l.hd = nil
		if !d.started {
			l.lose("a << with no delimiter word after it")
			return true
		}
		if strings.ContainsAny(string(d.word), "$`") {
			l.lose("a here-document delimiter holding $ or ` (shells differ on it): write a plain word such as EOF")
			return true
		}
		f := l.top()
		if len(f.pending) >= maxPendingHeredocs {
			l.lose(fmt.Sprintf("more than %d here-documents on one line", maxPendingHeredocs))
			return true
		}
		f.pending = append(f.pending, heredoc{delim: string(d.word), quoted: d.quoted, stripTabs: d.stripTabs})
		l.wordStart = true
		return false
	case c == '\'':
		d.inSingle, d.quoted = true, true
	case c == '"':
		d.inDouble, d.quoted = true, true
	case c == '\\':
		d.esc, d.quoted = true, true
	default:
		d.word = append(d.word, c)
	}
	d.started = true
	if len(d.word) > maxHeredocDelimiter {
		l.hd = nil
		l.lose(fmt.Sprintf("a here-document delimiter longer than %d bytes", maxHeredocDelimiter))
	}
	return true
}

func (l *shLexer) heredocByte(f *frame, c byte) {
	if c == '\n' {
		if !f.doc.quoted && l.esc {
			// bash joins a line ending in \ with the next before looking
			// for the delimiter, dash does not.
			l.lose(`a here-document line ending in \ (bash and dash end the document at different lines)`)
			return
		}
		l.esc, l.dollar, l.dollarName = false, false, false
		if l.endHeredocLine(f) {
			return
		}
		f.line = f.line[:0]
		f.lineHasValue = false
		return
	}
	if len(f.line) <= len(f.doc.delim)+64 {
		f.line = append(f.line, c)
	}
	if f.doc.quoted {
		return
	}
	if l.esc {
		l.esc = false
		return
	}
	if l.dollar {
		l.dollar = false
		switch {
		case c == '(' || c == '{' || c == '[':
			l.lose("an expansion ($(...), ${...}, $((...))) inside an unquoted here-document: compute it in a command before the here-document, or quote the delimiter (<<'EOF')")
			return
		case isNameStart(c):
			l.dollarName = true
			return
		}
	}
	if l.dollarName && !isNameByte(c) {
		l.dollarName = false
	}
	switch c {
	case '\\':
		l.esc = true
	case '$':
		l.dollar = true
	case '`':
		l.lose("backticks inside an unquoted here-document: compute the value in a command before the here-document, or quote the delimiter (<<'EOF')")
	}
}

// errValueEndsHeredoc is the render error for a value that would end a
// here-document early.
var errValueEndsHeredoc = errors.New("the value would make a line equal to the here-document's delimiter and end it early; choose a delimiter the value cannot contain")

// endHeredocLine checks the line just completed in a here-document body: it
// reports whether it ended the document.
func (l *shLexer) endHeredocLine(f *frame) bool {
	line := string(f.line)
	if f.doc.stripTabs {
		line = strings.TrimLeft(line, "\t")
	}
	if line != f.doc.delim {
		if strings.HasPrefix(line, f.doc.delim+")") {
			// Inside $( ), bash ends the document at "EOF)" too; sh does not.
			if f.lineHasValue {
				l.fail = errValueEndsHeredoc
			}
			l.lose("a here-document line starting with its delimiter and ) (bash ends the document there, sh does not)")
		}
		return false
	}
	if f.lineHasValue {
		l.fail = errValueEndsHeredoc
		l.lose(errValueEndsHeredoc.Error())
		return true
	}
	l.pop()
	l.esc, l.dollar, l.dollarName = false, false, false
	l.wordStart = true
	l.word = l.word[:0]
	cmd := l.top()
	if len(cmd.pending) > 0 {
		doc := cmd.pending[0]
		cmd.pending = cmd.pending[1:]
		l.push(frame{kind: fHeredoc, doc: doc})
	}
	return true
}

// refusal is a place no value may go, with what to write instead.
type refusal struct{ where, instead string }

func (r *refusal) Error() string {
	if r.instead == "" {
		return "a value cannot go " + r.where
	}
	return "a value cannot go " + r.where + ": " + r.instead
}

// context says how a value written now would be quoted, or why none can go
// here.
func (l *shLexer) context() (shellCtx, error) {
	if l.fail != nil {
		return 0, l.fail
	}
	if l.lost != "" {
		return 0, &refusal{where: "after " + l.lost, instead: "values are refused from there on"}
	}
	if l.hd != nil || l.lt == 2 {
		return 0, &refusal{where: "in a here-document delimiter (<<WORD)", instead: "write a fixed delimiter such as <<'EOF'"}
	}
	f := l.top()
	switch f.kind {
	case fComment:
		return 0, &refusal{where: "in a # comment", instead: "move it out of the comment, or drop it"}
	case fArith:
		return 0, &refusal{where: "inside $(( )) or $[ ] (arithmetic can run commands named by a value)", instead: "do the arithmetic in the template ({{add .vars.x 1}}, sub, mul) and use the result as a word"}
	case fBacktick:
		return 0, &refusal{where: "inside backticks", instead: "write $( ) instead of `...`"}
	case fParam:
		return 0, &refusal{where: "inside ${...}", instead: "assign it to a shell variable first (v={{...}}) and expand that"}
	case fANSI:
		return 0, &refusal{where: "inside $'...'", instead: "put it outside the $'...', or in '...' or \"...\""}
	}
	if l.esc && f.kind != fSingle && !(f.kind == fHeredoc && f.doc.quoted) {
		return 0, &refusal{where: `right after a backslash (it would escape the value's quoting)`, instead: `remove the \ or write \\`}
	}
	if l.dollar && f.kind != fSingle && !(f.kind == fHeredoc && f.doc.quoted) {
		return 0, &refusal{where: "right after $ (it would become part of an expansion)", instead: `write \$ for a literal dollar`}
	}
	if l.dollarName && f.kind != fSingle && !(f.kind == fHeredoc && f.doc.quoted) {
		return 0, &refusal{where: "right after a $NAME (it would lengthen the name)", instead: "write ${NAME} with braces"}
	}
	switch f.kind {
	case fDouble:
		return ctxDouble, nil
	case fSingle:
		return ctxSingle, nil
	case fHeredoc:
		if f.doc.quoted {
			return ctxHereQuoted, nil
		}
		return ctxHereUnquoted, nil
	}
	return ctxBare, nil
}

// bareSafe matches values that stay one literal word unquoted anywhere in
// a word: no glob, brace-expansion comma, assignment =, tilde or quote.
var bareSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+-]+$`)

// reservedWords would change a command's meaning as a bare word at its start.
var reservedWords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true,
	"case": true, "esac": true, "while": true, "until": true, "for": true, "in": true,
	"function": true, "select": true, "time": true, "coproc": true,
}

// escapeFor returns s quoted for ctx.
//
// wordStart says the value starts a word (a reserved word must be quoted
// there); tilde says it follows a bare ~ (it must be quoted so it does not
// name a home directory).
func escapeFor(ctx shellCtx, s string, wordStart, tilde bool) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", errors.New("the value holds a NUL byte, which no shell word can carry")
	}
	if (ctx == ctxDouble || ctx == ctxHereUnquoted) && !utf8.ValidString(s) {
		// Escaping with backslashes relies on the shell reading bytes as
		// the characters they are; in a multibyte locale an invalid
		// sequence could swallow the backslash.
		return "", fmt.Errorf("the value is not valid UTF-8, which cannot be escaped safely in %s; put it in '...'", ctx)
	}
	switch ctx {
	case ctxBare:
		if s == "" {
			return "''", nil
		}
		if bareSafe.MatchString(s) && !(wordStart && reservedWords[s]) && !tilde {
			return s, nil
		}
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", nil
	case ctxSingle:
		return strings.ReplaceAll(s, "'", `'\''`), nil
	case ctxDouble:
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			switch c := s[i]; c {
			case '$', '`', '\\', '"':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '!':
				// \! keeps its backslash in POSIX sh; closing the quotes
				// around '!' is literal in every shell, history on or off.
				b.WriteString(`"'!'"`)
			default:
				b.WriteByte(c)
			}
		}
		return b.String(), nil
	case ctxHereUnquoted:
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			switch c := s[i]; c {
			case '$', '`', '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
		return b.String(), nil
	case ctxHereQuoted:
		return s, nil
	}
	return "", fmt.Errorf("unknown shell context %d", ctx)
}

// value quotes s for the current context and advances the lexer past it.
func (l *shLexer) value(s string) (string, error) {
	ctx, err := l.context()
	if err != nil {
		return "", err
	}
	if strings.IndexByte(s, '\n') >= 0 && l.pendingAnywhere() && ctx != ctxHereQuoted && ctx != ctxHereUnquoted {
		return "", errors.New("the value holds a newline and lands on the line of a << here-document, whose body would start inside it; put the value on another line")
	}
	out, err := escapeFor(ctx, s, l.wordStart, l.tilde)
	if err != nil {
		return "", err
	}
	l.afterValue(out)
	if l.fail != nil {
		return "", l.fail
	}
	return out, nil
}

// afterValue moves the lexer past an already quoted value: a quoted value
// leaves the context as it found it, so only word and line state change.
func (l *shLexer) afterValue(out string) {
	l.esc, l.dollar, l.dollarName, l.justOpened, l.lt, l.prevParen, l.tilde = false, false, false, false, 0, false, false
	l.wordStart = false
	l.word = append(l.word[:0], 0)
	f := l.top()
	if f.kind != fHeredoc {
		return
	}
	f.lineHasValue = true
	for i := 0; i < len(out) && l.lost == ""; i++ {
		if out[i] != '\n' {
			if len(f.line) <= len(f.doc.delim)+64 {
				f.line = append(f.line, out[i])
			}
			continue
		}
		if l.endHeredocLine(f) {
			return
		}
		f.line = f.line[:0]
		f.lineHasValue = true
	}
}

// finish checks the end of the command: a last here-document line made
// equal to its delimiter by a value.
func (l *shLexer) finish() error {
	if l.fail != nil || l.lost != "" {
		return l.fail
	}
	f := l.top()
	if f.kind == fHeredoc && f.lineHasValue {
		line := string(f.line)
		if f.doc.stripTabs {
			line = strings.TrimLeft(line, "\t")
		}
		if line == f.doc.delim {
			return errValueEndsHeredoc
		}
	}
	return nil
}
