//go:build unix

package runner

import (
	"os/exec"
	"testing"
)

func TestQuoteRoundTripsThroughSh(t *testing.T) {
	cases := map[string]string{
		"empty":          "",
		"plain":          "redis-server",
		"space":          "two words",
		"single quote":   "it's",
		"only quotes":    "'''",
		"double quote":   `say "hi"`,
		"command subst":  "$(touch /tmp/dpulab-pwned)",
		"backticks":      "`touch /tmp/dpulab-pwned`",
		"variable":       "$HOME ${PATH}",
		"newline":        "line1\nline2\n",
		"semicolon":      "a; rm -rf /tmp/dpulab-nothing",
		"pipes and amps": "a | b && c || d & e",
		"glob":           "* ? [a-z]",
		"tilde hash":     "~root #comment",
		"backslashes":    `\\ \n \' \"`,
		"dash option":    "-n",
		"assignment":     "A=b",
		"non utf8":       "\xff\xfe\x80 bytes",
		"tab cr":         "a\tb\rc",
		"unicode":        "日本語 ü",
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
			if err != nil {
				t.Fatalf("sh -c with %q: %v", Quote(s), err)
			}
			if string(out) != s {
				t.Fatalf("Quote(%q) = %s; sh printed %q", s, Quote(s), out)
			}
		})
	}
}

func TestQuoteAllKeepsArgumentsApart(t *testing.T) {
	args := []string{"", "a b", "it's", "$(x)", "\n"}
	out, err := exec.Command("sh", "-c", "set -- "+QuoteAll(args...)+`; for a in "$@"; do printf '<%s>' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "<><a b><it's><$(x)><\n>"; string(out) != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

func TestParseUname(t *testing.T) {
	tests := []struct {
		in      string
		want    Platform
		wantErr bool
	}{
		{"Linux x86_64\n", Platform{"linux", "amd64"}, false},
		{"Linux aarch64", Platform{"linux", "arm64"}, false},
		{"Darwin arm64", Platform{"darwin", "arm64"}, false},
		{"Linux armv7l", Platform{"linux", "arm"}, false},
		{"Linux weird", Platform{}, true},
		{"", Platform{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseUname(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ParseUname(%q) = %v, %v; want %v, err=%v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
