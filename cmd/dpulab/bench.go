package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/steps/bench"
)

// newBenchCmd is `dpulab bench`: parse flags into a bench.Config and run it,
// printing tables (default) or the JSON-lines stream (--json).
func newBenchCmd() *cobra.Command {
	cfg := bench.DefaultConfig()
	var (
		targets, sockets, ratio, sizeList string
		keyPattern, client                string
		asJSON                            bool
	)
	cmd := &cobra.Command{
		Use:   "bench --target HOST:PORT[,HOST:PORT...] | --unixsocket PATH [flags]",
		Short: "Run the load generator against Redis-compatible servers",
		Long: `dpulab bench drives one or many Redis-compatible servers with a SET:GET mix and
reports throughput and latency (HDR histograms): a line per second while it runs,
then a table per run and, with --runs N, the mean, stddev, min and max across runs.

Conventions (memtier_benchmark's, so numbers compare):
  --ratio 1:10        one SET per ten GETs; every connection issues exactly that cycle
  --data-size-list    a weighted MIX of value sizes within each run, SIZE[:WEIGHT],...
                      (32,256,4096 = a third each; 32:9,4096:1 = mostly small).
                      For one run per size, run bench once per size.
  --key-prefix        default "memtier-", so key spaces written by either tool match
  --requests N        N requests in total across all connections, exactly N replies
  --rate OPS          total fixed rate; latency counts from when each request was
                      due, so a stalled server is not hidden (coordinated omission)
  --clients N         connections per target; 80 targets × 50 clients is fine

The password is read from the environment variable ` + bench.PasswordEnv + ` when
--password is not given; prefer it, so the password is not visible in the process list.

With --json, stdout carries one JSON object per line: "start", "prefill", "sample"
(every --interval), "run" (after each run) and "summary" (at the end).
Ctrl-C stops the run and prints what was measured so far.`,
		Example: `  dpulab bench --target 127.0.0.1:6379 --clients 50 --pipeline 16 --data-size 256 --duration 30s
  dpulab bench --target 10.0.0.7:6379,10.0.0.7:6380 --ratio 1:1 --prefill --runs 5 --json
  DPULAB_BENCH_PASSWORD=... dpulab bench --unixsocket /run/redis.sock --requests 100000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Targets = splitList(targets)
			cfg.UnixSockets = splitList(sockets)
			var errs []error
			// Collect every problem, flags and Validate alike, so that one
			// attempt shows all there is to fix.
			if r, err := bench.ParseRatio(ratio); err != nil {
				errs = append(errs, err)
			} else {
				cfg.Ratio = r
			}
			if sizeList != "" {
				if cmd.Flags().Changed("data-size") {
					errs = append(errs, errors.New("give --data-size or --data-size-list, not both"))
				}
				if l, err := bench.ParseSizeList(sizeList); err != nil {
					errs = append(errs, err)
				} else {
					cfg.DataSizeList = l
				}
			}
			if cmd.Flags().Changed("requests") && cmd.Flags().Changed("duration") {
				errs = append(errs, errors.New("give --duration or --requests, not both"))
			}
			cfg.KeyPattern = bench.KeyPattern(keyPattern)
			cfg.Client = bench.ClientKind(client)
			cfg.PasswordFromEnv()
			if err := errors.Join(append(errs, cfg.Validate())...); err != nil {
				return err
			}
			return runBench(cmd.Context(), cfg, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&targets, "target", "", "HOST:PORT of the server(s), comma-separated")
	f.StringVar(&sockets, "unixsocket", "", "Unix socket path(s) of the server(s), comma-separated")
	f.IntVarP(&cfg.Clients, "clients", "c", cfg.Clients, "connections per target")
	f.IntVarP(&cfg.Pipeline, "pipeline", "P", cfg.Pipeline, "requests in flight per connection")
	f.StringVar(&ratio, "ratio", cfg.Ratio.String(), "SET:GET ratio (1:10 = one SET per ten GETs)")
	f.IntVarP(&cfg.DataSize, "data-size", "d", cfg.DataSize, "value size in bytes")
	f.StringVar(&sizeList, "data-size-list", "", "weighted mix of value sizes, SIZE[:WEIGHT],... (instead of --data-size)")
	f.Int64Var(&cfg.KeyMaximum, "key-maximum", cfg.KeyMaximum, "number of keys: KEY-PREFIX + 0 .. key-maximum-1")
	f.StringVar(&cfg.KeyPrefix, "key-prefix", cfg.KeyPrefix, "prefix of every key")
	f.StringVar(&keyPattern, "key-pattern", string(cfg.KeyPattern), "random, sequential or gaussian")
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured time per run")
	f.Int64VarP(&cfg.Requests, "requests", "n", 0, "requests per run in total (instead of --duration)")
	f.DurationVar(&cfg.Warmup, "warmup", 0, "unmeasured load before each run")
	f.Float64Var(&cfg.Rate, "rate", 0, "fixed total rate in ops/s (0 = as fast as possible)")
	f.BoolVar(&cfg.Prefill, "prefill", false, "write every key once before the first run, so GETs hit")
	f.IntVar(&cfg.Runs, "runs", cfg.Runs, "repeat the run N times; the summary gives mean, stddev, min, max")
	f.StringVar(&cfg.Password, "password", "", "AUTH password (better: env "+bench.PasswordEnv+")")
	f.BoolVar(&asJSON, "json", false, "print JSON lines (start, sample, run, summary) instead of tables")
	f.StringVar(&client, "client", string(cfg.Client), "client path: lean (pipelined, allocation-free), go-redis, or auto (= lean)")
	f.IntVar(&cfg.Protocol, "protocol", cfg.Protocol, "RESP protocol version, 2 or 3")
	f.DurationVar(&cfg.ConnectTimeout, "connect-timeout", cfg.ConnectTimeout, "time allowed to connect (and authenticate) to each target")
	f.DurationVar(&cfg.Interval, "interval", cfg.Interval, "sampling interval")
	f.BoolVar(&cfg.TargetSamples, "target-samples", false, "with --json, also print a sample per target per interval")
	f.Int64Var(&cfg.Seed, "seed", 0, "seed for key and size choices (0 = from the clock)")
	return cmd
}

// quietLogger drops go-redis's log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// runBench runs the bench with its output. On Ctrl-C the results so far
// are printed and the exit status is 130, as for any interrupted command.
func runBench(ctx context.Context, cfg bench.Config, asJSON bool) error {
	// The bench reports connection errors itself, naming the target; go-redis's
	// own pool log lines would only repeat them between the progress lines.
	redis.SetLogger(quietLogger{})
	var emit func(bench.Event)
	var werr error
	if asJSON {
		emit = func(ev bench.Event) {
			if err := bench.Encode(os.Stdout, ev); err != nil && werr == nil {
				werr = err
			}
		}
	} else {
		h := &bench.HumanPrinter{Out: os.Stdout, Progress: os.Stderr}
		emit = h.Event
	}
	_, err := bench.Run(ctx, cfg, emit)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "dpulab bench:", termtext.Plain(err.Error()))
			return exitError{code: 130}
		}
		return err
	}
	if werr != nil {
		return fmt.Errorf("write results: %w", werr)
	}
	return nil
}
