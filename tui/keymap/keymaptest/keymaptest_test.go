package keymaptest

import (
	"reflect"
	"testing"

	"github.com/charmbracelet/bubbles/key"

	"github.com/dpulab/dpulab/tui/keymap"
)

// TestEveryBindingPresses: for every binding of the default key map, every
// key it lists becomes a press that the binding matches, so a test pressing
// km.X exercises exactly what X is bound to.
func TestEveryBindingPresses(t *testing.T) {
	km := reflect.ValueOf(*keymap.DefaultKeyMap())
	for i := range km.NumField() {
		b, ok := km.Field(i).Interface().(key.Binding)
		if !ok {
			continue
		}
		name := km.Type().Field(i).Name
		for _, k := range b.Keys() {
			msg := Msg(k)
			if msg.String() != k || !key.Matches(msg, b) {
				t.Errorf("%s: key %q presses %q, which the binding does not match", name, k, msg.String())
			}
		}
		if !key.Matches(Press(b), b) {
			t.Errorf("%s: Press does not match its binding", name)
		}
	}
}
