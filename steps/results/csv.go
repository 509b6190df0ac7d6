package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
)

// SamplesCSV is every per-second point of every run, one row each: where
// the row comes from, what its figures are (the column "figures":
// Figures.Short of its variant, "EMULATION", "SOFTWARE RDMA", empty for a
// measurement), then a column per metric with a per-second reader,
// named after the metric, in the table's order. A value the second did
// not measure is an empty cell, never 0.
func SamplesCSV(r *Results) ([]byte, error) {
	var cols []MetricDesc
	for _, m := range MetricDescs() {
		if m.Sample != nil {
			cols = append(cols, m)
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	row := []string{"step", "variant", "figures", "sweep", "run", "t_seconds"}
	for _, m := range cols {
		row = append(row, m.Name)
	}
	_ = w.Write(row)
	for _, c := range r.Benches {
		for vi := range c.Variants {
			v := &c.Variants[vi]
			figures := VariantFigures(r, v).Short()
			for _, sp := range v.Points {
				for _, run := range sp.Runs {
					for i := range run.Series {
						p := &run.Series[i]
						row = append(row[:0], c.Step, v.Label, figures, sp.Value, strconv.Itoa(run.Run), strconv.FormatFloat(p.T, 'f', 3, 64))
						for _, m := range cols {
							if x, ok := m.Sample(p); ok {
								row = append(row, m.CSV(x))
							} else {
								row = append(row, "")
							}
						}
						_ = w.Write(row)
					}
				}
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("write samples.csv: %w", err)
	}
	return buf.Bytes(), nil
}
