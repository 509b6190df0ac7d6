package rdma

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// connect makes a client and a server Conn over a fresh link of type typ
// and establishes it.
func connect(t testing.TB, typ QPType, ccfg, scfg Config) (*Conn, *Conn, *Link, *Fabric) {
	t.Helper()
	f := NewFabric()
	l := f.Pair(typ, FabricOptions{})
	ccfg.Role, scfg.Role = Client, Server
	c, err := NewConn(l.Client, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewConn(l.Server, scfg)
	if err != nil {
		t.Fatal(err)
	}
	l.Establish()
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s, l, f
}

// chunky writes p to w in random pieces, as a pipelining client does.
func chunky(w io.Writer, p []byte, rng *rand.Rand) error {
	for len(p) > 0 {
		n := min(len(p), 1+rng.IntN(40000))
		if rng.IntN(4) == 0 {
			n = min(len(p), 1+rng.IntN(64))
		}
		if _, err := w.Write(p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// TestStreamEcho: megabytes each way through 64 KiB buffers, in random
// pieces, come out identical and in order; the buffers were re-announced
// many times.
func TestStreamEcho(t *testing.T) {
	for _, typ := range []QPType{RC, UC} {
		t.Run(typ.String(), func(t *testing.T) {
			c, s, _, f := connect(t, typ, Config{RxSize: MinRxSize}, Config{RxSize: MinRxSize})
			const size = 4 << 20
			rng := rand.New(rand.NewPCG(1, uint64(typ)))
			src := make([]byte, size)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			go func() { // the server echoes what it reads
				buf := make([]byte, 7000)
				for {
					n, err := s.Read(buf)
					if err != nil {
						return
					}
					if _, err := s.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
			werr := make(chan error, 1)
			go func() { werr <- chunky(c, src, rand.New(rand.NewPCG(2, 3))) }()
			got := make([]byte, size)
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatal(err)
			}
			if err := <-werr; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, src) {
				i := 0
				for got[i] == src[i] {
					i++
				}
				t.Fatalf("echo differs from byte %d", i)
			}
			for name, k := range map[string]*Counters{"client": c.Counters(), "server": s.Counters()} {
				if r := k.Reregistrations.Load(); r < size/MinRxSize-1 {
					t.Errorf("%s re-announced its buffer %d times for %d bytes through %d", name, r, size, MinRxSize)
				}
				if k.BytesIn.Load() != size || k.BytesOut.Load() != size {
					t.Errorf("%s counted %d in, %d out; want %d each", name, k.BytesIn.Load(), k.BytesOut.Load(), size)
				}
				if k.LostWrites.Load() != 0 || k.ProtocolErrors.Load() != 0 {
					t.Errorf("%s counted errors: %d lost, %d protocol", name, k.LostWrites.Load(), k.ProtocolErrors.Load())
				}
			}
			if v := f.Violations(); v != 0 {
				t.Errorf("%d writes broke the fabric's rules", v)
			}
		})
	}
}

// respServer answers SET and GET read from conn, a minimal Redis for
// driving the transport with real request/response traffic.
func respServer(conn io.ReadWriter) error {
	r := bufio.NewReaderSize(conn, 16<<10)
	w := bufio.NewWriterSize(conn, 16<<10)
	db := map[string][]byte{}
	for {
		args, err := readCommand(r)
		if err != nil {
			return err
		}
		switch string(args[0]) {
		case "SET":
			db[string(args[1])] = args[2]
			w.WriteString("+OK\r\n")
		case "GET":
			if v, ok := db[string(args[1])]; ok {
				fmt.Fprintf(w, "$%d\r\n%s\r\n", len(v), v)
			} else {
				w.WriteString("$-1\r\n")
			}
		default:
			w.WriteString("-ERR unknown command\r\n")
		}
		// Flush when the pipeline is drained, as a real server does.
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

func readCommand(r *bufio.Reader) ([][]byte, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(line[1 : len(line)-2])
	if err != nil || line[0] != '*' {
		return nil, fmt.Errorf("bad array header %q", line)
	}
	args := make([][]byte, n)
	for i := range args {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l, err := strconv.Atoi(line[1 : len(line)-2])
		if err != nil {
			return nil, err
		}
		args[i] = make([]byte, l+2)
		if _, err := io.ReadFull(r, args[i]); err != nil {
			return nil, err
		}
		args[i] = args[i][:l]
	}
	return args, nil
}

func command(args ...string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// TestRESPPipeline: pipelined SET/GET, values from a few bytes to larger
// than the receive buffer, many times the buffer in all; every reply is
// the one expected, byte for byte, in order.
func TestRESPPipeline(t *testing.T) {
	for _, typ := range []QPType{RC, UC} {
		t.Run(typ.String(), func(t *testing.T) {
			c, s, _, _ := connect(t, typ, Config{RxSize: MinRxSize}, Config{RxSize: MinRxSize})
			go respServer(s)
			rng := rand.New(rand.NewPCG(7, 7))
			var script, want bytes.Buffer
			vals := map[string]string{}
			for i := 0; i < 3000; i++ {
				key := "key:" + strconv.Itoa(rng.IntN(200))
				if rng.IntN(2) == 0 {
					size := rng.IntN(300)
					if rng.IntN(50) == 0 {
						size = 100_000 + rng.IntN(100_000) // bigger than the buffer
					}
					v := make([]byte, size)
					for j := range v {
						v[j] = 'a' + byte(rng.IntN(26))
					}
					vals[key] = string(v)
					script.Write(command("SET", key, string(v)))
					want.WriteString("+OK\r\n")
				} else {
					script.Write(command("GET", key))
					if v, ok := vals[key]; ok {
						fmt.Fprintf(&want, "$%d\r\n%s\r\n", len(v), v)
					} else {
						want.WriteString("$-1\r\n")
					}
				}
			}
			if script.Len() < 20*MinRxSize {
				t.Fatalf("script of %d bytes is not many times the buffer", script.Len())
			}
			werr := make(chan error, 1)
			go func() { werr <- chunky(c, script.Bytes(), rand.New(rand.NewPCG(8, 8))) }()
			got := make([]byte, want.Len())
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatalf("reading replies: %v (client %v, server %v)", err, c.Err(), s.Err())
			}
			if err := <-werr; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatal("replies differ from the expected ones")
			}
		})
	}
}

// TestUCLostWrite: a UC write dropped or truncated on the way is reported
// on that connection as ErrLostWrite and counted; what Read delivered
// before is exactly the stream's start, never a gap filled with stale
// bytes.
func TestUCLostWrite(t *testing.T) {
	for _, fault := range []Fault{{Kind: Drop}, {Kind: Truncate, Keep: 100}} {
		t.Run(fmt.Sprint(fault.Kind), func(t *testing.T) {
			f := NewFabric()
			l := f.Pair(UC, FabricOptions{})
			var mu sync.Mutex
			victim := 0
			l.Client.SetFault(func(m Message) Fault {
				mu.Lock()
				defer mu.Unlock()
				// The 40th write, well into the stream.
				if m.Op == OpWrite {
					victim++
					if victim == 40 {
						return fault
					}
				}
				return Fault{}
			})
			shared := &Counters{}
			c, err := NewConn(l.Client, Config{Role: Client, RxSize: MinRxSize})
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewConn(l.Server, Config{Role: Server, RxSize: MinRxSize, Counters: shared})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			defer s.Close()
			l.Establish()
			// Random bytes: a pattern repeating with the buffer's size
			// would make stale bytes from the last round look right.
			src := make([]byte, 1<<20)
			rng := rand.New(rand.NewPCG(5, 5))
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			go chunky(c, src, rand.New(rand.NewPCG(4, 4)))
			var got []byte
			buf := make([]byte, 3000)
			var rerr error
			// A backstop only: the loss must show long before.
			s.SetReadDeadline(time.Now().Add(time.Minute))
			for {
				n, err := s.Read(buf)
				got = append(got, buf[:n]...)
				if len(got) > len(src) || !bytes.Equal(got, src[:len(got)]) {
					t.Fatalf("wrong bytes delivered after %d good ones", len(got)-n)
				}
				if err != nil {
					rerr = err
					break
				}
			}
			if !errors.Is(rerr, ErrLostWrite) {
				t.Fatalf("server read error %v, want ErrLostWrite", rerr)
			}
			if len(got) >= len(src) {
				t.Fatal("everything arrived although a write was lost")
			}
			if n := s.Counters().LostWrites.Load(); n != 1 {
				t.Errorf("connection counted %d lost writes, want 1", n)
			}
			if n := shared.LostWrites.Load(); n != 1 {
				t.Errorf("shared counters have %d lost writes, want 1", n)
			}
			// The client learns of it too: the server disconnected.
			if _, err := c.Write([]byte("x")); err == nil {
				// Posting may race the disconnect; a read settles it.
				if _, err := c.Read(buf); err == nil {
					t.Error("client still works after the server dropped the connection")
				}
			}
		})
	}
}

// rawPeer drives one side of a link by hand, to send what a Conn never
// would.
type rawPeer struct {
	qp       *FabricQP
	cmd, out Region
}

func newRawPeer(t *testing.T, qp *FabricQP) *rawPeer {
	t.Helper()
	p := &rawPeer{qp: qp}
	var err error
	if p.cmd, err = qp.Register(MsgSize*RecvSlots, false); err != nil {
		t.Fatal(err)
	}
	if p.out, err = qp.Register(4096, false); err != nil {
		t.Fatal(err)
	}
	for i := range RecvSlots {
		if err := qp.PostRecv(uint64(i), p.cmd, i*MsgSize, MsgSize); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func (p *rawPeer) send(t *testing.T, b []byte) {
	t.Helper()
	copy(p.out.Bytes(), b)
	if err := p.qp.PostSend(1, p.out, 0, len(b), false); err != nil {
		t.Fatal(err)
	}
}

func (p *rawPeer) sendMsg(t *testing.T, m Msg) {
	t.Helper()
	b := make([]byte, MsgSize)
	if err := m.Put(b); err != nil {
		t.Fatal(err)
	}
	p.send(t, b)
}

// next waits for the next control message the peer's Conn sent.
func (p *rawPeer) next(t *testing.T) Msg {
	t.Helper()
	var wc [1]Completion
	for {
		n, _ := p.qp.Poll(wc[:])
		if n == 1 {
			if wc[0].Status != StatusSuccess || wc[0].Op != OpRecv {
				t.Fatalf("raw peer completion %+v", wc[0])
			}
			slot := int(wc[0].WRID)
			m, err := ParseMsg(p.cmd.Bytes()[slot*MsgSize : slot*MsgSize+int(wc[0].ByteLen)])
			if err != nil {
				t.Fatal(err)
			}
			p.qp.PostRecv(wc[0].WRID, p.cmd, slot*MsgSize, MsgSize)
			return m
		}
		<-p.qp.Notify()
	}
}

// rawServer is a Conn client facing a hand-driven server.
func rawServer(t *testing.T, typ QPType) (*Conn, *rawPeer, *Link) {
	t.Helper()
	f := NewFabric()
	l := f.Pair(typ, FabricOptions{})
	c, err := NewConn(l.Client, Config{Role: Client, RxSize: MinRxSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p := newRawPeer(t, l.Server)
	l.Establish()
	if m := p.next(t); m.Op != OpRegisterXferMemory || m.Length != MinRxSize {
		t.Fatalf("client's first message %+v, want its buffer announced", m)
	}
	return c, p, l
}

// TestMalformedControl: a control message of the wrong length, an unknown
// opcode, a server setting client features, or an impossible buffer ends
// the connection with ErrProtocol; none panics.
func TestMalformedControl(t *testing.T) {
	keepalive := make([]byte, MsgSize)
	(Msg{Op: OpKeepalive}).Put(keepalive)
	cases := map[string]func(*testing.T, *rawPeer){
		"short":          func(t *testing.T, p *rawPeer) { p.send(t, keepalive[:31]) },
		"unknown opcode": func(t *testing.T, p *rawPeer) { p.send(t, append([]byte{0, 9}, keepalive[2:]...)) },
		"set feature from server": func(t *testing.T, p *rawPeer) {
			p.sendMsg(t, Msg{Op: OpSetClientFeature})
		},
		"empty buffer": func(t *testing.T, p *rawPeer) {
			p.sendMsg(t, Msg{Op: OpRegisterXferMemory, Addr: 0x1000, Length: 0, RKey: 1})
		},
		"huge buffer": func(t *testing.T, p *rawPeer) {
			p.sendMsg(t, Msg{Op: OpRegisterXferMemory, Addr: 0x1000, Length: MaxRxSize + 1, RKey: 1})
		},
		"wrapping buffer": func(t *testing.T, p *rawPeer) {
			p.sendMsg(t, Msg{Op: OpRegisterXferMemory, Addr: ^uint64(0) - 10, Length: 4096, RKey: 1})
		},
	}
	for name, inject := range cases {
		t.Run(name, func(t *testing.T) {
			c, p, _ := rawServer(t, RC)
			p.sendMsg(t, Msg{Op: OpKeepalive}) // a good one first: no effect
			inject(t, p)
			_, err := c.Read(make([]byte, 10))
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("read error %v, want ErrProtocol", err)
			}
			if n := c.Counters().ProtocolErrors.Load(); n != 1 {
				t.Errorf("counted %d protocol errors", n)
			}
		})
	}
}

// TestWriteOutsideRegion: a peer announcing a buffer under a wrong rkey
// gets a write the adapter refuses (RC: remote access error, queue pair in
// error state); the writer's connection reports it.
func TestWriteOutsideRegion(t *testing.T) {
	c, p, _ := rawServer(t, RC)
	real, err := p.qp.Register(MinRxSize, true)
	if err != nil {
		t.Fatal(err)
	}
	p.sendMsg(t, Msg{Op: OpRegisterXferMemory, Addr: real.Addr(), Length: MinRxSize, RKey: real.RKey() + 1})
	c.Write([]byte("*1\r\n$4\r\nPING\r\n"))
	_, err = c.Read(make([]byte, 10))
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("read error %v, want ErrProtocol (remote access)", err)
	}
}

// TestServerFeatures: GetServerFeature is answered with the same select
// and no features, as Valkey answers; SetClientFeature with none is fine,
// with some is refused.
func TestServerFeatures(t *testing.T) {
	f := NewFabric()
	l := f.Pair(RC, FabricOptions{})
	s, err := NewConn(l.Server, Config{Role: Server, RxSize: MinRxSize, Keepalive: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := newRawPeer(t, l.Client)
	l.Establish()
	if m := p.next(t); m.Op != OpRegisterXferMemory {
		t.Fatalf("server's first message %+v", m)
	}
	p.sendMsg(t, Msg{Op: OpGetServerFeature, Select: 5})
	if m := p.next(t); m != (Msg{Op: OpGetServerFeature, Select: 5}) {
		t.Fatalf("feature answer %+v", m)
	}
	p.sendMsg(t, Msg{Op: OpSetClientFeature})
	p.sendMsg(t, Msg{Op: OpSetClientFeature, Features: 1})
	if _, err := s.Read(make([]byte, 1)); !errors.Is(err, ErrProtocol) {
		t.Fatalf("read error %v, want ErrProtocol", err)
	}
}

// TestKeepalive: a server sends keepalives; a client hearing them stays
// up past its peer timeout.
func TestKeepalive(t *testing.T) {
	c, s, _, _ := connect(t, RC, Config{RxSize: MinRxSize, PeerTimeout: 200 * time.Millisecond},
		Config{RxSize: MinRxSize, Keepalive: 10 * time.Millisecond})
	for s.Counters().KeepalivesSent.Load() < 50 {
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("client failed although keepalives came: %v", err)
	}
}

// TestPeerDeath: a peer that vanishes without a word (Sever) is found
// dead: on RC by the server's failing keepalive, on UC by the client's
// peer timeout as keepalives stop.
func TestPeerDeath(t *testing.T) {
	t.Run("rc keepalive fails", func(t *testing.T) {
		_, s, l, _ := connect(t, RC, Config{RxSize: MinRxSize}, Config{RxSize: MinRxSize, Keepalive: 5 * time.Millisecond})
		l.Sever()
		if _, err := s.Read(make([]byte, 1)); !errors.Is(err, ErrPeerDead) {
			t.Fatalf("server read error %v, want ErrPeerDead", err)
		}
	})
	t.Run("uc silence", func(t *testing.T) {
		c, _, l, _ := connect(t, UC, Config{RxSize: MinRxSize, PeerTimeout: 50 * time.Millisecond},
			Config{RxSize: MinRxSize, Keepalive: 5 * time.Millisecond})
		l.Sever()
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, ErrPeerDead) {
			t.Fatalf("client read error %v, want ErrPeerDead", err)
		}
		if n := c.Counters().PeerDead.Load(); n != 1 {
			t.Errorf("counted %d dead peers", n)
		}
	})
}

// TestOrderlyClose: the peer's Close is io.EOF after the data it wrote;
// our own Close makes blocked and later calls return net.ErrClosed.
func TestOrderlyClose(t *testing.T) {
	c, s, _, _ := connect(t, RC, Config{RxSize: MinRxSize}, Config{RxSize: MinRxSize})
	if _, err := c.Write([]byte("*1\r\n$4\r\nQUIT\r\n")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	got, err := io.ReadAll(s)
	if err != nil || string(got) != "*1\r\n$4\r\nQUIT\r\n" {
		t.Fatalf("server read %q, %v", got, err)
	}
	if _, err := s.Write([]byte("+OK\r\n")); err == nil {
		t.Error("write to a closed peer succeeded")
	}
	blocked := make(chan error)
	s2c, s2s, _, _ := connect(t, UC, Config{RxSize: MinRxSize}, Config{RxSize: MinRxSize})
	_ = s2s
	go func() { _, err := s2c.Read(make([]byte, 1)); blocked <- err }()
	s2c.Close()
	if err := <-blocked; err == nil {
		t.Error("blocked read returned no error on Close")
	}
}

// TestReadDeadline: a reply that does not come (on UC, the way a lost
// reply shows) ends the Read at its deadline.
func TestReadDeadline(t *testing.T) {
	c, _, _, _ := connect(t, UC, Config{RxSize: MinRxSize}, Config{RxSize: MinRxSize})
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read error %v, want a deadline error", err)
	}
}

// TestConfigRefused: sizes out of range are refused with what to use.
func TestConfigRefused(t *testing.T) {
	f := NewFabric()
	for _, tc := range []struct {
		typ QPType
		cfg Config
	}{
		{RC, Config{Role: Client, RxSize: MinRxSize - 1}},
		{RC, Config{Role: Client, RxSize: MaxRxSize + 1}},
		{UC, Config{Role: Client, RxSize: MaxUCRxSize + 1}},
		{RC, Config{RxSize: MinRxSize}},
	} {
		if _, err := NewConn(f.Pair(tc.typ, FabricOptions{}).Client, tc.cfg); err == nil {
			t.Errorf("%s %+v accepted", tc.typ, tc.cfg)
		}
	}
}

// TestClientWaitsForAnnounce: a client's Write before the server announced
// its buffer is accepted into the backlog, posted once the announcement
// comes (nothing is posted before: the fabric would refuse it), then
// lands.
func TestClientWaitsForAnnounce(t *testing.T) {
	f := NewFabric()
	l := f.Pair(RC, FabricOptions{})
	c, err := NewConn(l.Client, Config{Role: Client, RxSize: MinRxSize})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewConn(l.Server, Config{Role: Server, RxSize: MinRxSize})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer s.Close()
	if n, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); n != 14 || err != nil {
		t.Fatalf("Write before the connection was established: %d, %v; want it taken into the backlog", n, err)
	}
	time.Sleep(20 * time.Millisecond)
	if got := c.Counters().WritesOut.Load(); got != 0 {
		t.Fatalf("%d writes posted before the server announced its buffer", got)
	}
	l.Establish()
	got := make([]byte, 14)
	if _, err := io.ReadFull(s, got); err != nil || string(got) != "*1\r\n$4\r\nPING\r\n" {
		t.Fatalf("server read %q, %v", got, err)
	}
}

// TestUCLostAcks: UC acks lost on the way are sent again from the
// receiver's tick, so a sender held at its window goes on, and every byte
// arrives.
func TestUCLostAcks(t *testing.T) {
	f := NewFabric()
	l := f.Pair(UC, FabricOptions{})
	var mu sync.Mutex
	dropped := 0
	l.Server.SetFault(func(m Message) Fault {
		mu.Lock()
		defer mu.Unlock()
		if m.Op == OpSend && m.Data[0] == 0x80 && m.Data[1] == 0x01 && dropped < 4 {
			dropped++
			return Fault{Kind: Drop}
		}
		return Fault{}
	})
	c, err := NewConn(l.Client, Config{Role: Client, RxSize: MinRxSize})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewConn(l.Server, Config{Role: Server, RxSize: MinRxSize, Keepalive: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer s.Close()
	l.Establish()
	rng := rand.New(rand.NewPCG(9, 9))
	src := make([]byte, 3*ucWindow*40)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	go func() {
		for p := src; len(p) > 0; p = p[40:] {
			// One write per 40 bytes: a Write made while bytes wait
			// would join them in the backlog and go out in one larger
			// write, and the window (counted in writes) would never
			// bind.
			for {
				c.mu.Lock()
				q := c.queued()
				c.mu.Unlock()
				if q == 0 {
					break
				}
				time.Sleep(20 * time.Microsecond)
			}
			if _, err := c.Write(p[:40]); err != nil {
				return
			}
		}
	}()
	got := make([]byte, len(src))
	s.SetReadDeadline(time.Now().Add(time.Minute)) // a backstop: a stall shows as an error
	if _, err := io.ReadFull(s, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Fatal("bytes differ")
	}
	if n := c.Counters().WritesOut.Load(); n < 3*ucWindow {
		t.Fatalf("%d writes posted, want at least %d: the window was never reached", n, 3*ucWindow)
	}
	mu.Lock()
	defer mu.Unlock()
	if dropped != 4 {
		t.Fatalf("dropped %d acks, want 4", dropped)
	}
}

// TestUCLostAckRepeats: every UC ack value is lost the first two times
// it goes out (the threshold's send and the tick's, or two ticks), as two
// losses in a row on a loaded wire do. The sender, stopped at its window
// with everything it wrote taken in, sees no more traffic that would make
// the receiver ack anew: only a receiver that sends an unchanged count
// again gets it going. The read deadline is a backstop against a hang,
// not a timing assertion.
func TestUCLostAckRepeats(t *testing.T) {
	f := NewFabric()
	l := f.Pair(UC, FabricOptions{})
	var mu sync.Mutex
	seen := map[uint32]int{}
	dropped := 0
	l.Server.SetFault(func(m Message) Fault {
		mu.Lock()
		defer mu.Unlock()
		if m.Op != OpSend || len(m.Data) < MsgSize || m.Data[0] != 0x80 || m.Data[1] != 0x01 {
			return Fault{}
		}
		msg, err := ParseMsg(m.Data[:MsgSize])
		if err != nil {
			return Fault{}
		}
		if seen[msg.Count]++; seen[msg.Count] <= 2 {
			dropped++
			return Fault{Kind: Drop}
		}
		return Fault{}
	})
	c, err := NewConn(l.Client, Config{Role: Client, RxSize: MinRxSize})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewConn(l.Server, Config{Role: Server, RxSize: MinRxSize, Keepalive: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer s.Close()
	l.Establish()
	rng := rand.New(rand.NewPCG(7, 7))
	src := make([]byte, 2*ucWindow*40)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	go func() {
		for p := src; len(p) > 0; p = p[40:] {
			// One write per 40 bytes, as in TestUCLostAcks, so the
			// window (counted in writes) binds.
			for {
				c.mu.Lock()
				q := c.queued()
				c.mu.Unlock()
				if q == 0 {
					break
				}
				time.Sleep(20 * time.Microsecond)
			}
			if _, err := c.Write(p[:40]); err != nil {
				return
			}
		}
	}()
	got := make([]byte, len(src))
	s.SetReadDeadline(time.Now().Add(time.Minute)) // a backstop: a stall shows as an error
	if _, err := io.ReadFull(s, got); err != nil {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%v (the client posted %d writes, %d acks dropped)", err, c.Counters().WritesOut.Load(), dropped)
	}
	if !bytes.Equal(got, src) {
		t.Fatal("bytes differ")
	}
	if n := c.Counters().WritesOut.Load(); n < 2*ucWindow {
		t.Fatalf("%d writes posted, want at least %d: the window was never reached", n, 2*ucWindow)
	}
}

// TestPeerBufferResized: a peer announcing a buffer of another size (and
// place) gets the following writes there, from offset 0, and never past
// its end.
func TestPeerBufferResized(t *testing.T) {
	c, p, _ := rawServer(t, RC)
	small, _ := p.qp.Register(100, true)
	big, _ := p.qp.Register(300, true)
	p.sendMsg(t, Msg{Op: OpRegisterXferMemory, Addr: small.Addr(), Length: 100, RKey: small.RKey()})
	src := make([]byte, 250)
	for i := range src {
		src[i] = byte(i)
	}
	if _, err := c.Write(src); err != nil {
		t.Fatal(err)
	}
	// Take the writes into the small buffer until it is full.
	landed := 0
	var wc [1]Completion
	for landed < 100 {
		if n, _ := p.qp.Poll(wc[:]); n == 0 {
			<-p.qp.Notify()
			continue
		}
		if wc[0].Op != OpRecvWriteImm || wc[0].Status != StatusSuccess {
			t.Fatalf("completion %+v", wc[0])
		}
		landed += int(wc[0].Imm)
		p.qp.PostRecv(wc[0].WRID, p.cmd, int(wc[0].WRID)*MsgSize, MsgSize)
	}
	if landed != 100 || !bytes.Equal(small.Bytes(), src[:100]) {
		t.Fatalf("small buffer got %d bytes: %v", landed, small.Bytes())
	}
	p.sendMsg(t, Msg{Op: OpRegisterXferMemory, Addr: big.Addr(), Length: 300, RKey: big.RKey()})
	// The backlog's rest goes to the new buffer from its offset 0.
	for landed < 250 {
		if n, _ := p.qp.Poll(wc[:]); n == 0 {
			<-p.qp.Notify()
			continue
		}
		if wc[0].Op != OpRecvWriteImm || wc[0].Status != StatusSuccess {
			t.Fatalf("completion %+v", wc[0])
		}
		landed += int(wc[0].Imm)
		p.qp.PostRecv(wc[0].WRID, p.cmd, int(wc[0].WRID)*MsgSize, MsgSize)
	}
	if landed != 250 || !bytes.Equal(big.Bytes()[:150], src[100:]) {
		t.Fatalf("big buffer starts %v", big.Bytes()[:150])
	}
}

// TestBothWriteFirst: two sides that each write three times the other's
// buffer before reading anything (our server answering a client that is
// still writing its pipeline) both finish: the bytes the peer's buffer
// cannot take wait in the backlog while the writer goes on to read. With
// blocking writes this deadlocked on Soft-RoCE (each waited for the other
// to read and re-announce its buffer).
func TestBothWriteFirst(t *testing.T) {
	for _, typ := range []QPType{RC, UC} {
		t.Run(typ.String(), func(t *testing.T) {
			f := NewFabric()
			l := f.Pair(typ, FabricOptions{})
			c, err := NewConn(l.Client, Config{Role: Client, RxSize: MinRxSize})
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewConn(l.Server, Config{Role: Server, RxSize: MinRxSize})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			defer s.Close()
			l.Establish()
			const n = 3 * MinRxSize
			errs := make(chan error, 2)
			for i, end := range []*Conn{c, s} {
				go func() {
					out := bytes.Repeat([]byte{byte('a' + i)}, n)
					if _, err := end.Write(out); err != nil {
						errs <- err
						return
					}
					in := make([]byte, n)
					end.SetReadDeadline(time.Now().Add(20 * time.Second))
					if _, err := io.ReadFull(end, in); err != nil {
						errs <- fmt.Errorf("reading after writing: %w", err)
						return
					}
					if !bytes.Equal(in, bytes.Repeat([]byte{byte('b' - i)}, n)) {
						errs <- errors.New("read the wrong bytes")
						return
					}
					errs <- nil
				}()
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
