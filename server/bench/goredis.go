package bench

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/dpulab/dpulab/server/transport"
)

// newGoRedisClient builds the go-redis client of one target, configured for
// measuring rather than for resilience: the protocol is the one asked for
// (go-redis defaults to 3), no CLIENT SETINFO or maintenance-notification
// handshake that the other path does not send, no retries (a retried
// request hides an error and doubles a latency), no timeouts of its own (a
// stalled server shows up as latency; the run's stall guard closes the
// connections), and a pool exactly as big as the target's clients.
func newGoRedisClient(cfg *Config, ep transport.Endpoint, ioc *ioCounters, set *connSet) *redis.Client {
	return redis.NewClient(&redis.Options{
		// Network and Addr only name the target: Dialer connects through
		// the transport seam.
		Network:  string(ep.Transport),
		Addr:     ep.Address,
		Username: cfg.User,
		Password: cfg.Password,
		DB:       cfg.SelectDB,
		Protocol: cfg.Protocol,
		Dialer: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dial(ctx, cfg, ep, ioc, set)
		},
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		MaxRetries:               -1,
		DialTimeout:              cfg.ConnectTimeoutFor(ep),
		DialerRetries:            1,
		ReadTimeout:              -1,
		WriteTimeout:             -1,
		ContextTimeoutEnabled:    true,
		PoolSize:                 cfg.ConnsPerTarget(),
		MaxActiveConns:           cfg.ConnsPerTarget(),
		PoolTimeout:              cfg.ConnectTimeoutFor(ep),
		PipelinePoolSize:         -1,
		ConnMaxIdleTime:          -1,
	})
}

// goRedisConn is one worker's dedicated connection from its target's pool.
type goRedisConn struct {
	c      *redis.Conn
	ctx    context.Context
	prefix string
	val    []byte
	kinds  kindCache
}

func dialGoRedis(ctx context.Context, cl *redis.Client, cfg *Config, val []byte) (*goRedisConn, error) {
	c := cl.Conn()
	// Ping dials, authenticates and warms the connection before timing.
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, err
	}
	return &goRedisConn{c: c, ctx: context.Background(), prefix: cfg.KeyPrefix, val: val, kinds: newKindCache()}, nil
}

func (g *goRedisConn) key(k int64) string { return g.prefix + strconv.FormatInt(k, 10) }

func (g *goRedisConn) classify(o op, err error, r *reply) (connErr bool) {
	var re redis.Error
	switch {
	case err == nil && o.cmd == cmdGet:
		r.kind = rHit
	case err == nil:
		r.kind = rOK
	case errors.Is(err, redis.Nil):
		r.kind = rMiss
	case errors.As(err, &re):
		r.kind = rErr
		r.errKind = g.kinds.of([]byte(err.Error()))
		r.errMsg = g.kinds.msg([]byte(err.Error()))
	default:
		return true
	}
	return false
}

func (g *goRedisConn) do(ops []op, res []reply) (int, error) {
	if len(ops) == 1 {
		o := ops[0]
		var err error
		if o.cmd == cmdSet {
			err = g.c.Set(g.ctx, g.key(o.key), g.val[:o.size], time.Duration(o.exp)*time.Second).Err()
		} else {
			err = g.c.Get(g.ctx, g.key(o.key)).Err()
		}
		res[0].at = nanotime()
		if g.classify(o, err, &res[0]) {
			return 0, err
		}
		return 1, nil
	}
	cmds, _ := g.c.Pipelined(g.ctx, func(p redis.Pipeliner) error {
		for _, o := range ops {
			if o.cmd == cmdSet {
				p.Set(g.ctx, g.key(o.key), g.val[:o.size], time.Duration(o.exp)*time.Second)
			} else {
				p.Get(g.ctx, g.key(o.key))
			}
		}
		return nil
	})
	// go-redis hands the pipeline back whole: every reply of it arrived by
	// now, so they share one timestamp.
	at := nanotime()
	for i := range ops {
		var err error
		if i < len(cmds) {
			err = cmds[i].Err()
		} else {
			err = errors.New("go-redis returned fewer replies than requests")
		}
		res[i].at = at
		if g.classify(ops[i], err, &res[i]) {
			return i, err
		}
	}
	return len(ops), nil
}

func (g *goRedisConn) close() error { return g.c.Close() }
