package suggest

import "testing"

func TestClosest(t *testing.T) {
	cands := []string{"name", "address", "port", "user", "identity", "roles", "labels"}
	for _, tc := range []struct{ in, want string }{
		{"adress", "address"},
		{"Adress", "address"},
		{"rols", "roles"},
		{"prot", "port"},
		{"identty", "identity"},
		{"zzzzzz", ""},
		{"x", ""},
	} {
		if got := Closest(tc.in, cands); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
