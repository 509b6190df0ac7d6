package runner

import "strings"

// Quote returns s quoted for a POSIX shell so that the shell reads it back as
// exactly one word with exactly the bytes of s: no expansion ($, `), no word
// splitting, no globbing, no command separators. It wraps s in single quotes
// and writes each embedded single quote as '\” (close, escaped quote, reopen),
// the only character a single-quoted string cannot hold. The empty string
// becomes ” so that it stays an (empty) argument instead of vanishing.
//
// Every value the runner or the step engine puts into a command line goes
// through Quote; it is the one place quoting is done.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if isShellSafe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b.WriteString(`'\''`)
			continue
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// QuoteAll quotes every element of args and joins them with spaces, ready to
// be appended to a command line.
func QuoteAll(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// isShellSafe reports whether s can be written bare: only characters no POSIX
// shell treats specially anywhere in a word. Leaving such words unquoted keeps
// logged command lines readable; '=' is excluded so a bare word is never read
// as an assignment, and '~' and '#' because they are special at word start.
func isShellSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == '/' || c == ':' || c == ',' || c == '+' || c == '@' || c == '%':
		default:
			return false
		}
	}
	return true
}
