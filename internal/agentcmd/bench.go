package agentcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/server/bench"
)

// benchLong is `dpulab bench --help`. Every claim in it is held by a test
// in server/bench (flags, semantics) or here (exit codes).
const benchLong = `dpulab bench drives one or many Redis-compatible servers with a SET:GET mix and
reports throughput and latency (HDR histograms): a line per second while it runs,
then a table per run and, with -x N, the mean, stddev, min and max across runs.

memtier_benchmark's flags mean what they mean in memtier_benchmark:
  -s/--server, -p/--port   one target HOST:PORT (default localhost:6379)
  -S/--unix-socket PATH    Unix socket(s)
  -t/--threads × -c/--clients   connections per target (-t 4 -c 50 = 200)
  -n/--requests N          N requests per client (per connection): a run gets
                           N × clients × threads × targets replies
  --test-time SECS         seconds per run; -x/--run-count N runs
  --ratio SET:GET          1:10 = one SET per ten GETs, in that exact cycle
  --key-pattern SET:GET    R random, S sequential (each connection walks the whole
                           range), G gaussian, P parallel (each connection of a
                           target walks its own slice; P:P only)
  --key-minimum/--key-maximum   key numbers, both included; --key-prefix
  -d/--data-size, --data-size-range MIN-MAX with --data-size-pattern R|S,
  --data-size-list SIZE[:WEIGHT],...   value sizes (one of the three)
  --expiry-range MIN-MAX   SET key value EX n, n drawn from MIN..MAX seconds
  --rate-limiting OPS      ops/s per connection
  --print-percentiles 50,99,99.9   --select-db N   -P/--protocol resp2|resp3
  --pipeline N             requests in flight per connection
  --json-out-file FILE     results in memtier's JSON shape (ALL STATS, Totals,
                           Percentile Latencies, Time-Serie ...)
  --hdr-file-prefix P      HdrHistogram logs P_FULL_RUN_N.hgrm (and _SET/_GET_
                           command_run_N.hgrm) and percentiles P_FULL_RUN_N.txt
  -a/--authenticate PASS or USER:PASS   accepted for memtier command lines, with
                           a warning: argv is visible to every user in ps.
Defaults differ in three places: -t 1 (memtier 4), a 10s run when neither -n
nor --test-time is given (memtier -n 10000), --key-maximum 999999 (memtier
10000000). redis-benchmark users: its -P N (pipeline) is --pipeline N here, its
-s SOCKET is -S SOCKET, its -n TOTAL is --requests-total TOTAL.

dpulab's own:
  --target HOST:PORT,...   many targets at once (each gets threads × clients)
  --duration 30s           --test-time as a duration; --warmup D unmeasured first
  --requests-total N       N requests per run in total over all connections
  --rate OPS               total fixed rate over all connections
  (--rate and --rate-limiting count latency from when each request was due, so
  a stalled server is not hidden: coordinated omission)
  --prefill                write every key once first, so GETs hit
  --json                   JSON lines on stdout instead of tables: "header"
                           (schema_version), "start", "prefill", "sample",
                           "run", "summary"; see FORMATS.md
Old spellings that still work: --unixsocket, --runs, --key-pattern random|
sequential|gaussian (sequential = P:P), --protocol 2|3.

The password: the environment variable ` + bench.PasswordEnv + ` (never visible in
ps); --user names an ACL user. -a and --password work, with a warning.

Exit status: 0 done, 1 the bench failed (a server unreachable, a run ended
early, all requests failed, a result file not written), 2 usage error (a bad
flag or value), 130 interrupted by Ctrl-C (128 + N for signal N: 143 for
SIGTERM); what was measured until then is printed.`

// NewBenchCmd is `dpulab bench`: the flags are server/bench's (bench.Flags),
// so that the command line the engine builds with Config.Args is the one
// this parses.
func NewBenchCmd() *cobra.Command {
	var (
		flags  *bench.Flags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "bench [-s HOST -p PORT | --target HOST:PORT,... | -S PATH] [flags]",
		Short: "Run the load generator against Redis-compatible servers (memtier_benchmark's flags)",
		Long:  benchLong,
		Example: `  dpulab bench -s 127.0.0.1 -p 6379 -t 4 -c 50 -n 10000 --ratio 1:10 --json-out-file out.json
  dpulab bench --target 10.0.0.7:6379,10.0.0.7:6380 --test-time 30 --pipeline 16 -x 5 --json
  DPULAB_BENCH_PASSWORD=... dpulab bench -S /run/redis.sock --requests-total 100000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, warns, err := flags.Config()
			for _, w := range warns {
				fmt.Fprintln(cmd.ErrOrStderr(), "dpulab bench: warning:", w)
			}
			if err != nil {
				return UsageError{err}
			}
			cfg.PasswordFromEnv()
			return runBench(cmd.Context(), cfg, asJSON, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	flags = bench.NewFlags(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON lines (header, start, sample, run, summary) instead of tables")
	return cmd
}

// benchSignals returns a context that ends on the first of SIGINT, SIGTERM
// and SIGHUP (unless ignored at start, as under nohup), and the exit status
// that signal calls for.
func benchSignals(parent context.Context) (context.Context, func(), func() (int, bool)) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, InterruptSignals()...)
	var mu sync.Mutex
	var first syscall.Signal
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			if sig, ok := s.(syscall.Signal); ok {
				mu.Lock()
				first = sig
				mu.Unlock()
			}
			cancel()
		case <-done:
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
	return ctx, stop, func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if first == 0 {
			if parent.Err() != nil {
				return ExitCodeSignal(syscall.SIGINT), true
			}
			return 0, false
		}
		return ExitCodeSignal(first), true
	}
}

// quietLogger drops go-redis's log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// runBench runs the bench with its output. Signals end it as they end a
// headless run (signals.go): the results so far are printed and the exit
// status is 128 + the signal's number, 130 for Ctrl-C.
func runBench(ctx context.Context, cfg bench.Config, asJSON bool, stdout, stderr io.Writer) error {
	// The bench reports connection errors itself, naming the target; go-redis's
	// own pool log lines would only repeat them between the progress lines.
	redis.SetLogger(quietLogger{})
	ctx, stop, signalled := benchSignals(ctx)
	defer stop()
	var emit func(bench.Event)
	var werr error
	if asJSON {
		write := func(ev bench.Event) {
			if err := bench.Encode(stdout, ev); err != nil && werr == nil {
				werr = err
			}
		}
		write(bench.StreamHeader())
		emit = write
	} else {
		h := &bench.HumanPrinter{Out: stdout, Progress: stderr}
		emit = h.Event
	}
	_, err := bench.Run(ctx, cfg, emit)
	if code, ok := signalled(); ok {
		if err != nil {
			fmt.Fprintln(stderr, "dpulab bench:", termtext.Plain(err.Error()))
		}
		return ExitError{Code: code}
	}
	if err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("write results: %w", werr)
	}
	return nil
}
