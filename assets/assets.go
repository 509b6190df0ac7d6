// Package assets holds files shipped inside dpulab that labs share: redis.conf
// templates, and the published figures labs set beside their own results,
// each with its source. Labs refer to files as "assets/NAME" (config:
// assets/redis.conf.tmpl) and to figures by id (references: - figure: ID).
package assets

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed *.tmpl figures.yaml
var files embed.FS

//go:embed recordings
var recordings embed.FS

// FS returns the embedded assets, names relative to this directory.
func FS() fs.FS { return files }

// ReadFile reads one embedded asset by name (without the "assets/" prefix).
func ReadFile(name string) ([]byte, error) { return files.ReadFile(name) }

// Figure is a published figure with its source: the document, and the
// section or figure within it.
type Figure struct {
	ID     string `yaml:"id" json:"id"`
	Label  string `yaml:"label" json:"label"`
	Value  string `yaml:"value" json:"value"`
	Source string `yaml:"source" json:"source"`
}

var (
	figuresOnce sync.Once
	figures     []Figure
	figuresErr  error
)

// Figures returns the figures of figures.yaml, in file order. The file is
// part of the binary, so an error here is a build mistake that tests catch.
func Figures() ([]Figure, error) {
	figuresOnce.Do(func() {
		figures, figuresErr = parseFigures()
	})
	return figures, figuresErr
}

func parseFigures() ([]Figure, error) {
	b, err := files.ReadFile("figures.yaml")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Figures []Figure `yaml:"figures"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("assets/figures.yaml: %w", err)
	}
	seen := map[string]bool{}
	for i, f := range doc.Figures {
		if f.ID == "" || f.Label == "" || f.Value == "" || f.Source == "" {
			return nil, fmt.Errorf("assets/figures.yaml: figure %d (%q) needs id, label, value and source", i+1, f.ID)
		}
		if seen[f.ID] {
			return nil, fmt.Errorf("assets/figures.yaml: figure id %q used twice", f.ID)
		}
		seen[f.ID] = true
	}
	return doc.Figures, nil
}

// FigureByID returns the figure with id.
func FigureByID(id string) (Figure, bool) {
	fs, err := Figures()
	if err != nil {
		return Figure{}, false
	}
	for _, f := range fs {
		if f.ID == id {
			return f, true
		}
	}
	return Figure{}, false
}
