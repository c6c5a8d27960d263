// The baseline in a process of its own: paymock is a process apart from
// the load, so the bare server it is measured against is one too, as the
// wrk runs of issue 24 had it. In the load's own process the baseline
// shared the load's scheduler and threads, and was spared the wake-ups
// between processes that every paymock request pays.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// bareCommand is the command this program runs itself with to be the
// baseline: it reads the canned answers on its standard input, prints the
// address it serves on, and serves until its standard input closes.
const bareCommand = "serve-bare"

// cannedWire is a canned answer as the baseline process reads it.
type cannedWire struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// startBare starts the baseline process serving create and retrieve, and
// returns its address and how to stop it.
func startBare(create, retrieve canned) (addr string, stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(self, bareCommand)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		_ = in.Close() // the baseline ends when its input does
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	wire := map[string]cannedWire{
		"create":   {Status: create.status, Header: create.header, Body: create.body},
		"retrieve": {Status: retrieve.status, Header: retrieve.header, Body: retrieve.body},
	}
	b, err := json.Marshal(wire)
	if err == nil {
		_, err = in.Write(append(b, '\n'))
	}
	if err == nil {
		addr, err = bufio.NewReader(outPipe).ReadString('\n')
	}
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("the baseline process: %w", err)
	}
	return strings.TrimSpace(addr), stop, nil
}

// serveBareFrom is the baseline for another load tool (scripts/bench.sh
// drives both with wrk, as issue 24 measured): it captures a create and a
// retrieve from the paymock at base, prints the address it serves them on
// and the id of the payment it retrieved, and serves until ctx ends or
// the process is killed.
func serveBareFrom(ctx context.Context, base string, out io.Writer) error {
	if err := loopbackURL(base); err != nil {
		return err
	}
	c := config{base: base, key: "sk_test_load"}
	create, retrieve, err := capture(ctx, newClient(1), c)
	if err != nil {
		return fmt.Errorf("capture paymock's answers: %w", err)
	}
	var p struct{ ID string }
	if err := json.Unmarshal(retrieve.body, &p); err != nil || p.ID == "" {
		return fmt.Errorf("the retrieve answered no payment id: %s", retrieve.body)
	}
	return serveCanned(ctx, create, retrieve, out, " "+p.ID, nil)
}

// serveBare is the baseline process: the canned answers from in (one JSON
// line), then bareHandler on a loopback port, printed to out, until in
// closes.
func serveBare(ctx context.Context, in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("reading the canned answers: %w", err)
	}
	var wire map[string]cannedWire
	if err := json.Unmarshal(line, &wire); err != nil {
		return fmt.Errorf("reading the canned answers: %w", err)
	}
	c, ok1 := wire["create"]
	g, ok2 := wire["retrieve"]
	if !ok1 || !ok2 {
		return errors.New("the canned answers need a create and a retrieve")
	}
	closed := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, r); close(closed) }()
	return serveCanned(ctx, canned{c.Status, c.Header, c.Body}, canned{g.Status, g.Header, g.Body}, out, "", closed)
}

// serveCanned serves bareHandler on a loopback port, prints the port's
// address and then note to out, and serves until ctx ends or until closes
// (nil: never).
func serveCanned(ctx context.Context, create, retrieve canned, out io.Writer, note string, until <-chan struct{}) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: bareHandler(create, retrieve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	if _, err := fmt.Fprintln(out, ln.Addr().String()+note); err != nil {
		return err
	}
	select {
	case <-until:
	case <-ctx.Done():
	}
	return nil
}
