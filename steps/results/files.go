package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dpulab/dpulab/internal/atomicfile"
)

// Names of the files in a results folder.
const (
	ResultsFile = "results.json"
	SamplesFile = "samples.csv"
	ReportFile  = "report.md"
)

// LoadResults reads DIR/results.json, refusing versions newer than ours.
func LoadResults(dir string) (*Results, error) {
	p := filepath.Join(dir, ResultsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read results: %w (is %s a results folder?)", err, dir)
	}
	return ParseResults(b, p)
}

// ParseResults reads a results.json document (name says where it came
// from, for errors), refusing versions newer than ours.
func ParseResults(b []byte, p string) (*Results, error) {
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("results file %s is not valid JSON: %w", p, err)
	}
	if r.Version == 0 {
		return nil, fmt.Errorf("results file %s has no version: not written by dpulab", p)
	}
	if r.Version > ResultsVersion {
		return nil, fmt.Errorf("results file %s has version %d, newer than this dpulab's %d: upgrade dpulab", p, r.Version, ResultsVersion)
	}
	return &r, nil
}

// WriteResults writes results.json, samples.csv and report.md into dir,
// each atomically, so a run killed halfway leaves the previous complete set.
func WriteResults(dir string, r *Results) error {
	r.Version = ResultsVersion
	fillFigures(r)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ResultsFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return RenderFiles(dir, r)
}

// RenderFiles (re)writes samples.csv, report.md and report.html from r; `dpulab report`
// calls it on a loaded results.json.
func RenderFiles(dir string, r *Results) error {
	csvb, err := SamplesCSV(r)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, SamplesFile), csvb, 0o644); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ReportFile), []byte(RenderMarkdown(r)), 0o644); err != nil {
		return err
	}
	return WriteHTML(dir, r)
}
