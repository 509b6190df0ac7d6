package agentcmd

import (
	"bytes"
	"testing"
)

// TestTypedLines: sample lines get "type" first; lines that have one, and
// what is not a JSON object, pass unchanged; a line split over writes is
// written whole.
func TestTypedLines(t *testing.T) {
	var b bytes.Buffer
	w := &typedLines{w: &b, typ: "sample"}
	for _, p := range []string{`{"t":"2026-01-01T00:00:00Z","cpu":{}}` + "\n", `{"type":"other","x":1}` + "\n", `{}` + "\n", "{\"a\":", "1}\n", "not json\n"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"type":"sample","t":"2026-01-01T00:00:00Z","cpu":{}}` + "\n" + `{"type":"other","x":1}` + "\n" + `{"type":"sample"}` + "\n" + `{"type":"sample","a":1}` + "\n" + "not json\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
