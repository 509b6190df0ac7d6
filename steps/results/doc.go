// Package results is the results model of a lab run: results.json's schema
// (Results, Compare, RunResult, Point), the statistics over runs and the
// deltas against the baseline variant, the metric table, and the files
// rendered from it all: report.md (markdown.go, charts.go), report.html
// (html.go, html_charts.go, conclusion.go; its SVG and PNG charts are
// package svgchart), samples.csv (csv.go), their number formats
// (format.go), whether a delta is beyond the runs' noise
// (significance.go), and what the views warn of about a run or a compare
// (warnings.go: Warnings, the one source of report.md's, report.html's and
// the TUI compare view's warnings, in the same words).
//
// # Adding a metric
//
// A metric is one MetricDesc in metrics.go's table. Its entry says how it
// is read from one second of a bench (Sample, from a Point) and from a
// sweep point's summary (Read, from Stats), its samples.csv precision
// (Digits), how the live dashboard shows it (Live: the chart it shares, its
// legend, its big number) and which charts of a finished run draw it
// (Plots). Every view renders from the table: the dashboard, the compare
// view's table, charts and sweep chart, report.md's tables and charts,
// samples.csv's columns and the deltas. So a metric is:
//
//   - its entry, with Sample: PointMetric(name) and Read: StatsMetric(name);
//   - its source: the engine puts each second's value in
//     Point.Metrics[name] (from the sampler or the bench); SummarizeSeries
//     and Summarize carry it to RunResult.Metrics and Stats.Metrics.
//
// A metric with a Point and Stats field of its own (the built-ins) reads
// those instead; TestEveryStatHasAMetric ties each Stats field to its
// entry. A metric defined outside this package registers with
// RegisterMetric before the views are built.
package results
