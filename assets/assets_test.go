package assets

import (
	"strings"
	"testing"
)

func TestFiguresHaveSources(t *testing.T) {
	fs, err := Figures()
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) < 10 {
		t.Fatalf("only %d figures", len(fs))
	}
	for _, f := range fs {
		if !strings.Contains(f.Source, "Accelerating Redis Performance Using VMware vSphere 8") && !strings.Contains(f.Source, "实战对比Mellanox ConnectX-3网卡与InfiniBand") {
			t.Errorf("figure %s: source %q does not name its document by title", f.ID, f.Source)
		}
	}
	if f, ok := FigureByID("wp-tco"); !ok || !strings.Contains(f.Value, "$8.3M") {
		t.Errorf("wp-tco = %+v, %v", f, ok)
	}
	if _, ok := FigureByID("nope"); ok {
		t.Error("an unknown id was found")
	}
}

func TestRedisConfTemplateIsThere(t *testing.T) {
	b, err := ReadFile("redis.conf.tmpl")
	if err != nil || !strings.Contains(string(b), "port {{.port}}") {
		t.Fatalf("redis.conf.tmpl: %v", err)
	}
}
