package labs

// What labs' external tests (package labs_test) read of the package's
// insides. They are external because they parse labs whose steps are of
// kinds registered from packages under steps/kinds/, which an internal
// test cannot import (they import labs).

// EmbeddedFS holds the labs shipped with dpulab.
var EmbeddedFS = embedded

// Shells are the POSIX shells of this machine (shell_test.go).
var Shells = shells

// HasSyntax says kind k has a registered syntax.
func HasSyntax(k Kind) bool {
	_, ok := syntaxOf(k)
	return ok
}

// SyntaxKinds lists the kinds with a registered syntax, in no order.
func SyntaxKinds() []Kind {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	out := make([]Kind, 0, len(kindSyntaxes))
	for k := range kindSyntaxes {
		out = append(out, k)
	}
	return out
}
