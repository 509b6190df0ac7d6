package labs

import "testing"

func TestEmbeddedLabsLoad(t *testing.T) {
	ls, err := Embedded()
	if err != nil {
		t.Fatalf("embedded labs do not load:\n%v", err)
	}
	if len(ls) == 0 || ls[0].ID != DefaultLab {
		t.Fatalf("want %s first, got %v", DefaultLab, ls)
	}
}
