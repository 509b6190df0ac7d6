package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// redisPeer is a Debian redis-server started by a test on a free loopback
// port, without persistence.
type redisPeer struct {
	addr string
	cmd  *exec.Cmd
	rdb  *redis.Client
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startRedis starts redis-server with extra config arguments ("--requirepass",
// "pw", ...) and stops it when the test ends.
func startRedis(t testing.TB, extra ...string) *redisPeer {
	t.Helper()
	bin := testpeer.Require(t, "redis-server")
	for attempt := 0; attempt < 3; attempt++ {
		port := freePort(t)
		args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", t.TempDir(), "--protected-mode", "no"}, extra...)
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-exited:
				deadline = time.Time{} // port taken meanwhile: try another
				continue
			default:
			}
			if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
				c.Close()
				p := &redisPeer{addr: addr, cmd: cmd}
				pw := ""
				for i, a := range extra {
					if a == "--requirepass" && i+1 < len(extra) {
						pw = extra[i+1]
					}
				}
				p.rdb = redis.NewClient(&redis.Options{Addr: addr, Password: pw, Protocol: 2, DisableIdentity: true})
				t.Cleanup(func() {
					p.rdb.Close()
					cmd.Process.Kill()
					<-exited
				})
				return p
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatal("redis-server did not start on a free port")
	return nil
}

// kill stops the server abruptly, as a crash would.
func (p *redisPeer) kill() { p.cmd.Process.Signal(os.Kill) }

// calls returns INFO commandstats' call counts by lowercase command name.
func (p *redisPeer) calls(t testing.TB) map[string]int64 {
	t.Helper()
	info, err := p.rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, rest, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				out[strings.TrimPrefix(name, "cmdstat_")] = n
			}
		}
	}
	return out
}

func (p *redisPeer) reset(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	if err := p.rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := p.rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}
