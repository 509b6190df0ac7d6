package deploy

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kind"
)

// Runner is what running a deploy step asks of the engine: what it alone
// can do, because it keeps the run's saved progress (which cleanup and
// resume read), its prepared hosts and its prompts.
type Runner interface {
	Env
	// Prepared is h's target, reached, with the run's working directory
	// and dpulab there.
	Prepared(ctx context.Context, h kind.Host) (runner.Target, error)
	// StopGroup stops the recorded servers of group, of this run or an
	// earlier one.
	StopGroup(ctx context.Context, group string) error
	// ProcRecorder is a saver for one deploy's started processes: each
	// call returns once the saved progress holds them (a run killed from
	// then on still stops them), calls that overlap sharing one save.
	ProcRecorder() func(procs ...runner.Proc) error
	// StopUnrecorded ends, on t, the process groups whose command line
	// holds marker, or the working directory of an earlier, dead run of
	// the lab (a start interrupted before its pid was saved); it returns
	// how many it ended.
	StopUnrecorded(ctx context.Context, t runner.Target, marker string) int
	// Confirm asks the person question about host (yes, or an error
	// saying it was not confirmed); --yes answers it.
	Confirm(ctx context.Context, step, host, question string) error
	// Deployed records that p runs, every instance answering: the
	// deployments the load kind reads (group, instances, and server,
	// what ran when not the bundled server), saved in progress.
	Deployed(ctx context.Context, step string, p Plan, server string) error
	// WaitLimits bound the wait for the servers to answer.
	WaitLimits() Limits
}

// writeConcurrency bounds how many instance configs of one host are
// written at once, over the host's SFTP session (one channel: the writes
// are requests on it, pipelined, not sessions).
const writeConcurrency = 16

// Run makes exactly p run: it stops the group's servers (from this or an
// earlier run), starts p's instances on every host in parallel, waits
// until each answers PING, and records the deployment. vars are what a
// redis.conf template sees.
func Run(ctx context.Context, env Runner, step string, p Plan, vars map[string]string) error {
	if err := env.StopGroup(ctx, p.Group); err != nil {
		return err
	}
	var conf []byte
	if p.Config != "" {
		b, err := env.Lab().ReadFile(p.Config)
		if err != nil {
			return fmt.Errorf("read config template %s: %w", p.Config, err)
		}
		conf = b
	}
	for _, h := range p.Hosts {
		if len(InstanceDir(env.Workdir(), p.Group, p.Port+p.Instances-1))+len("/redis.sock") > 100 {
			return fmt.Errorf("deploy on %s: the Unix socket path under %s is too long", h.Name, env.Workdir())
		}
	}
	errs := make([]error, len(p.Hosts))
	record := env.ProcRecorder()
	var wg sync.WaitGroup
	for k, h := range p.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = runHost(ctx, env, step, p, h, conf, vars, record)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	server := ""
	if p.Server != "" {
		server = serverRan(ctx, env, step, p)
	}
	err := env.Deployed(ctx, step, p, server)
	env.Say(step, p.Hosts[0].Name, "group %s: %d instances on %d host(s) answer PING (ports %d-%d)", p.Group, p.Instances, len(p.Hosts), p.Port, p.Port+p.Instances-1)
	return err
}

// runHost starts p's instances on one host: the directories in one
// command, each config written into its own directory, then every
// instance started by runner.StartAll (a few commands, each starting a
// batch of instances, each instance still its own process group), each
// batch recorded as soon as its pids are known; then it waits until every
// instance answers PING.
func runHost(ctx context.Context, env Runner, step string, p Plan, h kind.Host, tmpl []byte, vars map[string]string, record func(...runner.Proc) error) error {
	t, err := env.Prepared(ctx, h)
	if err != nil {
		return err
	}
	if err := ensureServer(ctx, env, step, p, h, t); err != nil {
		return err
	}
	// Something already answering on an instance's port would be
	// benchmarked instead of our server: look at every port first.
	if err := ForEach(p.Instances, probeConcurrency, func(k int) error {
		return portFree(ctx, env, step, p, h, t, k)
	}); err != nil {
		return err
	}
	if err := makeInstanceDirs(ctx, env, p, h, t); err != nil {
		return err
	}
	procs, err := startInstances(ctx, env, step, p, h, t, tmpl, vars, record)
	if err != nil {
		return err
	}
	// Wait until every instance answers, as long as each one's start
	// progresses; one that exits meanwhile fails the step at once, with
	// its log (wait.go).
	started := make([]Started, p.Instances)
	for k := range started {
		port := p.Port + k
		started[k] = Started{At: p.HostSide(h, k), Proc: procs[k], Log: logFile(env, p, port), Cmd: p.ServerCmd(env.Agent(h), env.Workdir(), port)}
	}
	return Await(ctx, env, h, t, p.Group, started, env.WaitLimits())
}

func logFile(env Env, p Plan, port int) string {
	return path.Join(InstanceDir(env.Workdir(), p.Group, port), "server.log")
}

// portFree refuses instance k's port when something answers PING there
// (it would be benchmarked instead of our server), unless that is a server
// of this lab that no progress recorded, which it stops.
func portFree(ctx context.Context, env Runner, step string, p Plan, h kind.Host, t runner.Target, k int) error {
	inst := p.HostSide(h, k)
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	perr := Ping(pctx, env, h, t, inst)
	cancel()
	if perr == nil && env.StopUnrecorded(ctx, t, logFile(env, p, inst.Port)) > 0 {
		env.Say(step, h.Name, "stopped a server left from an interrupted start on port %d", inst.Port)
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		perr = Ping(pctx, env, h, t, inst)
		cancel()
		if perr != nil {
			perr = errors.New("stopped")
		}
	}
	if perr == nil {
		return &kind.StepError{Host: h.Name, Err: fmt.Errorf("instance %s:%d: port %d already answers PING: another server is running there; stop it or choose another port (--set of the lab's port variable)", p.Group, inst.Port, inst.Port)}
	}
	return nil
}

// makeInstanceDirs creates every instance's directory on a host, and
// removes sockets an earlier run left there, in one command.
func makeInstanceDirs(ctx context.Context, env Env, p Plan, h kind.Host, t runner.Target) error {
	dirs := make([]string, p.Instances)
	socks := make([]string, p.Instances)
	for k := range dirs {
		dirs[k] = InstanceDir(env.Workdir(), p.Group, p.Port+k)
		socks[k] = path.Join(dirs[k], "redis.sock")
	}
	cmd := "mkdir -p -m 700 " + runner.QuoteAll(dirs...) + " && rm -f " + runner.QuoteAll(socks...)
	res, err := t.Run(ctx, runner.Command{Cmd: cmd, Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		return &kind.StepError{Host: h.Name, Tail: kind.TailText(res.Tail), Err: fmt.Errorf("create the directories of group %s's %d instances under %s: %v", p.Group, p.Instances, env.Workdir(), kind.ErrOr(err, res))}
	}
	return nil
}

// startInstances writes every instance's config, then starts them all,
// recording each batch's processes in saved progress as soon as their pids
// are known (a run killed from then on still stops them later). The error
// names the lowest-numbered instance that failed.
func startInstances(ctx context.Context, env Runner, step string, p Plan, h kind.Host, t runner.Target, tmpl []byte, vars map[string]string, record func(...runner.Proc) error) ([]runner.Proc, error) {
	if err := ForEach(p.Instances, writeConcurrency, func(k int) error {
		return writeConfig(ctx, env, p, h, t, k, tmpl, vars)
	}); err != nil {
		return nil, err
	}
	specs := make([]runner.ProcSpec, p.Instances)
	for k := range specs {
		port := p.Port + k
		specs[k] = runner.ProcSpec{Name: ProcName(p.Group, port), Cmd: p.ServerCmd(env.Agent(h), env.Workdir(), port), LogFile: logFile(env, p, port)}
	}
	var recMu sync.Mutex
	var recErr error
	procs, errs := runner.StartAll(ctx, t, specs, func(ps []runner.Proc) {
		err := record(ps...)
		recMu.Lock()
		if recErr == nil {
			recErr = err
		}
		recMu.Unlock()
		for _, proc := range ps {
			env.Say(step, h.Name, "started %s (pid %d), log %s", proc.Name, proc.PID, proc.LogFile)
		}
	})
	for k, err := range errs {
		if err != nil {
			port := p.Port + k
			return procs, &kind.StepError{Host: h.Name, Cmd: specs[k].Cmd, Err: fmt.Errorf("start instance %s:%d: %w", p.Group, port, err)}
		}
	}
	return procs, recErr
}

// writeConfig renders instance k's config and writes it into the
// instance's directory.
func writeConfig(ctx context.Context, env Env, p Plan, h kind.Host, t runner.Target, k int, tmpl []byte, vars map[string]string) error {
	port := p.Port + k
	conf, err := RenderConfig(env, p, h, k, tmpl, vars)
	if err != nil {
		return err
	}
	dest := path.Join(InstanceDir(env.Workdir(), p.Group, port), "redis.conf")
	// The directory is the run's own (makeInstanceDirs): the config goes
	// straight there, through a temporary file renamed over it.
	if err := runner.WriteFile(ctx, t, dest, []byte(conf), 0o600); err != nil {
		return &kind.StepError{Host: h.Name, Err: fmt.Errorf("instance %s:%d: write %s: %w", p.Group, port, dest, err)}
	}
	return nil
}
