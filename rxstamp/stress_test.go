//go:build linux

package rxstamp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stressBudget is how long TestStampedConnsUnderGC opens connections, and at most how many:
// 3 s or 3000 by default, 1 s or 300 with -short; RXSTAMP_STRESS=DURATION runs that long with
// no cap (e.g. RXSTAMP_STRESS=5m go test -race -run UnderGC ./rxstamp/).
func stressBudget(t *testing.T) (time.Duration, int) {
	if v := os.Getenv("RXSTAMP_STRESS"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("RXSTAMP_STRESS=%q: %v", v, err)
		}
		return d, int(^uint(0) >> 1)
	}
	if testing.Short() {
		return time.Second, 300
	}
	return 3 * time.Second, 3000
}

// stressByte is the byte at offset off of connection seed's stream: a reader that got bytes
// from anywhere else (another read's buffer, another connection) sees the wrong ones.
func stressByte(seed uint32, off int) byte {
	return byte(uint32(off)*2654435761>>24) ^ byte(seed) ^ byte(off>>8)
}

// stressLen is the length of connection seed's stream.
func stressLen(seed uint32) int { return 1 + int(seed%(16<<10)) }

// Stamped connections opened, read and closed by the thousand while the collector runs without
// pause (GC percent 1, and runtime.GC in a loop), every read's bytes checked against what was
// sent, and pointer-rich garbage checked alongside. A read whose system call wrote anywhere but
// its own buffer, within its length, corrupts the bytes (the check fails) or the heap (the
// collector throws "found bad pointer in Go heap", or the canary's lists break). Every fourth
// connection is read by three goroutines at once while a fourth asks for its stamps, as
// net.Conn allows; run with -race to check that Conn is race-free under that use, and with
// -gcflags=all=-d=checkptr (implied by -race) to check the pointer conversions underneath.
func TestStampedConnsUnderGC(t *testing.T) {
	budget, maxConns := stressBudget(t)
	defer debug.SetGCPercent(debug.SetGCPercent(1))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var servers sync.WaitGroup
	defer servers.Wait()
	defer ln.Close()
	servers.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			servers.Go(func() { stressServe(c) })
		}
	})

	stop := make(chan struct{})
	var bg sync.WaitGroup
	var gcs atomic.Int64
	bg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			runtime.GC()
			gcs.Add(1)
		}
	})
	canaryErr := make(chan error, 1)
	bg.Go(func() { canaryErr <- canary(stop) })

	var (
		next    atomic.Int64 // connections started
		done    atomic.Int64 // connections read to their end and checked
		reads   atomic.Int64
		seqRead atomic.Int64 // reads by a connection's only reader
		kernel  atomic.Int64 // of those, the ones timed by the kernel's stamp
		failed  atomic.Bool
		workers sync.WaitGroup
	)
	fail := func(format string, args ...any) {
		if failed.CompareAndSwap(false, true) {
			t.Errorf(format, args...)
		}
	}
	start := time.Now()
	deadline := start.Add(budget)
	for w := range 16 {
		workers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for !failed.Load() && time.Now().Before(deadline) {
				i := next.Add(1)
				if i > int64(maxConns) {
					return
				}
				seed := rng.Uint32()
				concurrent := i%4 == 0
				r, k, err := stressConn(ln.Addr().String(), seed, concurrent, rng)
				if err != nil {
					fail("connection %d (seed %#x, concurrent readers %v): %v", i, seed, concurrent, err)
					return
				}
				reads.Add(int64(r))
				if !concurrent {
					seqRead.Add(int64(r))
					kernel.Add(int64(k))
				}
				done.Add(1)
			}
		})
	}
	workers.Wait()
	close(stop)
	bg.Wait()
	if err := <-canaryErr; err != nil {
		t.Error(err)
	}
	t.Logf("%d connections, %d reads (%d of %d single-reader ones timed by the kernel's stamp), %d forced collections in %v",
		done.Load(), reads.Load(), kernel.Load(), seqRead.Load(), gcs.Load(), time.Since(start).Round(time.Millisecond))
	if failed.Load() {
		return
	}
	if done.Load() < 16 {
		t.Errorf("only %d connections in %v: the test proved little", done.Load(), budget)
	}
	if kernel.Load() == 0 {
		t.Errorf("no read carried a kernel stamp: the stamped path was not exercised")
	}
}

// stressServe answers one connection: it reads the 4-byte seed and writes the seed's stream
// in pieces of random size, then closes.
func stressServe(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return
	}
	seed := binary.LittleEndian.Uint32(hdr[:])
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	total := stressLen(seed)
	buf := make([]byte, 0, 4<<10)
	for off := 0; off < total; {
		n := min(1+rng.IntN(4<<10), total-off)
		buf = buf[:n]
		for j := range buf {
			buf[j] = stressByte(seed, off+j)
		}
		if _, err := c.Write(buf); err != nil {
			return
		}
		off += n
		if rng.IntN(4) == 0 {
			runtime.Gosched() // let some pieces arrive as segments of their own
		}
	}
}

// stressConn dials a stamped connection, asks for seed's stream and reads it to EOF: one
// reader checking every byte in order, or (concurrent) three readers at once checking the
// count and the sum of the bytes, with a fourth goroutine asking for stamps meanwhile. It
// returns the reads made and how many of them carried a kernel stamp.
func stressConn(addr string, seed uint32, concurrent bool, rng *rand.Rand) (reads, kernel int, err error) {
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, 0, err
	}
	defer raw.Close()
	w, ok := Wrap(raw)
	if !ok {
		return 0, 0, errors.New("Wrap refused a loopback TCP connection")
	}
	c := w.(*Conn)
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	var hdr [4]byte
	binary.LittleEndian.PutUint32(hdr[:], seed)
	if _, err := c.Write(hdr[:]); err != nil {
		return 0, 0, err
	}
	total := stressLen(seed)
	if !concurrent {
		buf := make([]byte, 8<<10)
		for off := 0; ; {
			p := buf[:1+rng.IntN(len(buf))]
			if rng.IntN(3) == 0 {
				p = make([]byte, len(p)) // fresh garbage for the collector to free and reuse
			}
			n, err := c.Read(p)
			now := time.Now()
			if n > len(p) {
				return reads, kernel, fmt.Errorf("read %d bytes into %d", n, len(p))
			}
			for j := range n {
				if want := stressByte(seed, off+j); p[j] != want {
					return reads, kernel, fmt.Errorf("byte %d of %d is %#x, sent %#x", off+j, total, p[j], want)
				}
			}
			off += n
			if err == io.EOF {
				if off != total {
					return reads, kernel, fmt.Errorf("EOF after %d bytes, sent %d", off, total)
				}
				return reads, kernel, nil
			}
			if err != nil {
				return reads, kernel, err
			}
			reads++
			if c.Kernel() {
				kernel++
			}
			if at := c.Arrived(now); at.After(now) {
				return reads, kernel, fmt.Errorf("Arrived %v after the time it was given", at.Sub(now))
			}
		}
	}

	var want uint64
	for off := range total {
		want += uint64(stressByte(seed, off))
	}
	var (
		got, count atomic.Uint64
		nreads     atomic.Int64
		readers    sync.WaitGroup
		errs       = make(chan error, 4)
		stop       = make(chan struct{})
	)
	for r := range 3 {
		readers.Go(func() {
			buf := make([]byte, 512<<r)
			for {
				n, err := c.Read(buf)
				if n < 0 || n > len(buf) {
					errs <- fmt.Errorf("read %d bytes into %d", n, len(buf))
					return
				}
				var sum uint64
				for _, b := range buf[:n] {
					sum += uint64(b)
				}
				got.Add(sum)
				count.Add(uint64(n))
				if err == io.EOF {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				nreads.Add(1)
			}
		})
	}
	var asker sync.WaitGroup
	asker.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			now := time.Now()
			if at := c.Arrived(now); at.After(now) {
				errs <- fmt.Errorf("Arrived %v after the time it was given", at.Sub(now))
				return
			}
			_ = c.Kernel()
			time.Sleep(50 * time.Microsecond)
		}
	})
	readers.Wait()
	close(stop)
	asker.Wait()
	select {
	case err := <-errs:
		return int(nreads.Load()), 0, err
	default:
	}
	if count.Load() != uint64(total) || got.Load() != want {
		return int(nreads.Load()), 0, fmt.Errorf("three readers got %d bytes summing to %d; sent %d summing to %d",
			count.Load(), got.Load(), total, want)
	}
	return int(nreads.Load()), 0, nil
}

// canary builds and checks pointer-rich garbage until stop, a list every millisecond: a heap
// that some write corrupted breaks a list (or the collector throws on what it finds in one).
func canary(stop <-chan struct{}) error {
	type node struct {
		next *node
		val  int
		pad  [3]*int
	}
	const size = 500
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for round := 0; ; round++ {
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
		var head *node
		for i := range size {
			v := i
			head = &node{next: head, val: i, pad: [3]*int{&v, nil, &v}}
		}
		for i := size - 1; i >= 0; i-- {
			if head == nil || head.val != i || *head.pad[0] != i || head.pad[2] != head.pad[0] {
				return fmt.Errorf("canary round %d: node %d of a fresh list is corrupt", round, i)
			}
			head = head.next
		}
	}
}
