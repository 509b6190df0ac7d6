package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/internal/atomicfile"
	"github.com/dpulab/dpulab/internal/termtext"
)

// reportFormats are what `dpulab report --format` can write.
var reportFormats = []string{"all", "html", "md", "png", "svg"}

func newReportCmd() *cobra.Command {
	var formats []string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render a results folder (report.html, report.md, samples.csv; chart images, PNG or SVG)",
		Long: `Re-render a results folder: reads DIR/results.json (older versions included) and
writes its reports again, each file atomically, e.g. after upgrading dpulab.

--format says which:
  all   report.html, report.md and samples.csv (the default)
  html  report.html: one self-contained page with charts, to send or print
  md    report.md
  png   one image per chart at slide resolution (1920x1080), in DIR/charts/
  svg   the same charts as SVG files, in DIR/charts/
Several may be given: --format html,png. Each chart image carries a band
across its top saying what its figures are (EMULATION, REHEARSAL, ...;
MEASURED for a measurement), the lab, the date and the host count, and each
emulated variant's legend says EMULATION: an image pasted on a slide keeps
its label.`,
		Example: "  dpulab report results/quickstart/20261202T170000Z\n  dpulab report --format png results/quickstart/20261202T170000Z",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, f := range formats {
				if !slices.Contains(reportFormats, f) {
					return fmt.Errorf("unknown --format %q: use one or more of %s", f, strings.Join(reportFormats, ", "))
				}
			}
			dir := args[0]
			r, err := results.LoadResults(dir)
			if err != nil {
				return err
			}
			var wrote []string
			want := func(f string) bool { return slices.Contains(formats, f) }
			if want("all") {
				if err := results.RenderFiles(dir, r); err != nil {
					return err
				}
				wrote = append(wrote, results.ReportHTMLFile, results.ReportFile, results.SamplesFile)
			} else {
				if want("html") {
					if err := results.WriteHTML(dir, r); err != nil {
						return err
					}
					wrote = append(wrote, results.ReportHTMLFile)
				}
				if want("md") {
					if err := atomicfile.WriteFile(filepath.Join(dir, results.ReportFile), []byte(results.RenderMarkdown(r)), 0o644); err != nil {
						return err
					}
					wrote = append(wrote, results.ReportFile)
				}
			}
			for i, f := range wrote {
				wrote[i] = filepath.Join(dir, f)
			}
			for _, img := range []struct {
				format string
				write  func(string, *results.Results) ([]string, error)
			}{{"png", results.WriteChartPNGs}, {"svg", results.WriteChartSVGs}} {
				if !want(img.format) {
					continue
				}
				paths, err := img.write(dir, r)
				if err != nil {
					return err
				}
				if len(paths) == 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "no chart to draw: %s has no bench with data\n", termtext.Line(dir))
				}
				wrote = append(wrote, paths...)
			}
			out := cmd.OutOrStdout()
			for _, p := range wrote {
				fmt.Fprintf(out, "wrote %s\n", termtext.Line(p))
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&formats, "format", []string{"all"}, "what to write: "+strings.Join(reportFormats, ", ")+" (comma-separated)")
	return cmd
}
