package tui

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dpulab/dpulab/internal/termtext"
)

// hostileMarkers never appear in the terminal stream: the sequences above,
// and the clipboard payload even as text.
var hostileMarkers = []string{"52;c;", "SE9TVElMRQ", "\x1b[2J", "\x1b[3J", "\x1b[77;133H", "\x1b[?1049h", "\x1b[6n", "\x1b]"}

// bubbleteaCSI matches the control sequences bubbletea's renderer itself
// writes (cursor up and position, erase line and below, cursor visibility,
// bracketed paste, focus and mouse modes, scroll margins).
var bubbleteaCSI = regexp.MustCompile(`^\x1b\[(\?(25|2004|1004|100[0-6])[hl]|[0-9]*[ABCDK]|2K|J|0J|[0-9]*(;[0-9]*)?[Hr])$`)

// assertTerminalSafe parses a terminal byte stream: every ESC must start a
// CSI, every CSI be an SGR or one of bubbletea's own sequences, no C1
// control, bidi override or invalid UTF-8 may appear, nor any of the lab's
// payload markers. With labSGR, the SGRs must also be in termtext's safe
// subset (the TUI's own styles are off: the colour profile is ASCII).
func assertTerminalSafe(t *testing.T, stream []byte, labSGR bool) {
	t.Helper()
	s := string(stream)
	for _, m := range hostileMarkers {
		if i := strings.Index(s, m); i >= 0 {
			t.Errorf("the terminal stream holds %q at %d: …%q…", m, i, s[max(i-40, 0):min(i+40, len(s))])
		}
	}
	if !utf8.ValidString(s) {
		t.Error("the terminal stream is not valid UTF-8")
	}
	seen := map[string]int{}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			m := regexp.MustCompile(`^\x1b\[[0-?]*[ -/]*[@-~]`).FindString(s[i:])
			if m == "" {
				t.Errorf("ESC at %d starts no CSI: %q", i, s[i:min(i+20, len(s))])
				i++
				continue
			}
			switch {
			case strings.HasSuffix(m, "m"):
				if labSGR && termtext.SGR(m) != m {
					t.Errorf("SGR %q at %d is outside the safe subset", m, i)
				}
			case !bubbleteaCSI.MatchString(m):
				t.Errorf("control sequence %q at %d is not one bubbletea writes", m, i)
			}
			seen[m]++
			i += len(m)
			continue
		case r >= 0x80 && r < 0xa0:
			t.Errorf("C1 control %U at %d", r, i)
		case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			t.Errorf("bidi control %U at %d", r, i)
		case r < 0x20 && r != '\n' && r != '\r' && r != '\t':
			t.Errorf("C0 control %U at %d", r, i)
		}
		i += size
	}
	if t.Failed() {
		t.Logf("sequences seen: %v", seen)
	}
}
