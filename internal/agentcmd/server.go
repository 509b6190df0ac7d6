package agentcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/server"
	"github.com/dpulab/dpulab/server/transport"
)

// serverFlags are dpulab server's command-line settings; they override the
// config file.
type serverFlags struct {
	config      string
	port        int
	bind        []string
	unixSocket  string
	rdmaPort    int
	rdmaBind    []string
	instances   int
	requirePass string
	pidFile     string
	logFile     string
}

func NewServerCmd() *cobra.Command {
	var f serverFlags
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the bundled Redis-compatible server",
		Long: `Run dpulab's Redis-compatible server (RESP2/RESP3, redis.conf syntax).

Settings come from Redis's defaults, then --config FILE, then flags.
--instances N serves N independent instances (own keyspace and stats) on
ports port..port+N-1 in one process. SIGINT/SIGTERM or SHUTDOWN stop it.

--requirepass is visible to other users in the process list: prefer
"requirepass" in the config file, or the DPULAB_REQUIREPASS environment
variable.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfgs, err := serverConfigs(cmd, f)
			if err == nil {
				server.TuneGC()
				err = runServers(cmd.Context(), cfgs)
			}
			if errors.Is(err, transport.ErrNotBuilt) {
				// Asked for a transport this binary lacks: a usage error
				// (exit status 2), in the transport seam's words.
				return UsageError{err}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "redis.conf-style config file")
	fl.IntVar(&f.port, "port", 6379, "TCP port (0 disables TCP)")
	fl.StringSliceVar(&f.bind, "bind", nil, "addresses to listen on (repeatable or comma-separated; default 127.0.0.1 and ::1)")
	fl.StringVar(&f.unixSocket, "unixsocket", "", "also listen on this Unix socket path")
	fl.IntVar(&f.rdmaPort, "rdma-port", 0, "also serve RDMA on this port (Valkey's rdma-port; needs rdma-core's libraries and an RDMA device, on linux/amd64 or arm64)")
	fl.StringSliceVar(&f.rdmaBind, "rdma-bind", nil, "addresses RDMA listens on (Valkey's rdma-bind; default: --bind's)")
	fl.IntVar(&f.instances, "instances", 1, "number of independent instances on consecutive ports")
	fl.StringVar(&f.requirePass, "requirepass", "", "password clients must AUTH with (see above)")
	fl.StringVar(&f.pidFile, "pidfile", "", "write the process id here")
	fl.StringVar(&f.logFile, "logfile", "", "log here instead of standard output")
	return cmd
}

// serverConfigs builds one validated Config per instance.
func serverConfigs(cmd *cobra.Command, f serverFlags) ([]server.Config, error) {
	cfg := server.DefaultConfig()
	if f.config != "" {
		if err := cfg.LoadFile(f.config); err != nil {
			return nil, fmt.Errorf("%w\n(fix the line above in %s, or remove the directive)", err, f.config)
		}
	}
	changed := cmd.Flags().Changed
	if changed("port") {
		cfg.Port = f.port
	}
	if changed("bind") {
		cfg.Bind = f.bind
	}
	if changed("unixsocket") {
		cfg.UnixSocket = f.unixSocket
	}
	if changed("rdma-port") {
		cfg.RDMA.Port = f.rdmaPort
	}
	if changed("rdma-bind") {
		cfg.RDMA.Bind = f.rdmaBind
	}
	if changed("pidfile") {
		cfg.PidFile = f.pidFile
	}
	if changed("logfile") {
		cfg.LogFile = f.logFile
	}
	if changed("requirepass") {
		cfg.RequirePass = f.requirePass
	} else if pw := os.Getenv("DPULAB_REQUIREPASS"); pw != "" {
		cfg.RequirePass = pw
	}
	if f.instances < 1 || f.instances > 1024 {
		return nil, fmt.Errorf("--instances %d: must be 1..1024", f.instances)
	}
	if f.instances > 1 && cfg.Port == 0 {
		return nil, errors.New("--instances needs a TCP port: instances listen on port..port+N-1")
	}
	if cfg.Port+f.instances-1 > 65535 {
		return nil, fmt.Errorf("--instances %d from port %d runs past 65535; pick a lower --port", f.instances, cfg.Port)
	}
	if cfg.RDMA.Port != 0 && cfg.RDMA.Port+f.instances-1 > 65535 {
		return nil, fmt.Errorf("--instances %d from rdma-port %d runs past 65535; pick a lower rdma-port", f.instances, cfg.RDMA.Port)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid server configuration:\n%w", err)
	}
	cfgs := make([]server.Config, f.instances)
	for i := range cfgs {
		c := cfg
		c.Port = cfg.Port + i
		if cfg.RDMA.Port != 0 {
			c.RDMA.Port = cfg.RDMA.Port + i
		}
		if i > 0 {
			// One pid file per process; one socket file per instance.
			c.PidFile = ""
			if c.UnixSocket != "" {
				c.UnixSocket = cfg.UnixSocket + "." + strconv.Itoa(i)
			}
		}
		cfgs[i] = c
	}
	return cfgs, nil
}

// runServers starts every instance, and stops them all when ctx ends or any
// fails to start. An instance stopped by SHUTDOWN ends on its own; the
// process exits when all have.
func runServers(ctx context.Context, cfgs []server.Config) error {
	srvs := make([]*server.Server, len(cfgs))
	for i, c := range cfgs {
		s, err := server.New(c)
		if err != nil {
			return fmt.Errorf("instance %d (port %d): %w", i, c.Port, err)
		}
		srvs[i] = s
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(srvs))
	var wg sync.WaitGroup
	for i, s := range srvs {
		lns, err := s.Listen()
		if err != nil {
			cancel()
			wg.Wait()
			return fmt.Errorf("instance %d (port %d): %w", i, cfgs[i].Port, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Serve(ctx, lns...)
		}()
	}
	wg.Wait()
	var msgs []string
	for i, err := range errs {
		if err != nil {
			msgs = append(msgs, fmt.Sprintf("instance %d: %v", i, err))
		}
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "\n"))
	}
	return nil
}
