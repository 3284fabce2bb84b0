// kubelet-double-go — a kubelet double written with grpc-go, the gRPC
// implementation the real kubelet uses, for testing gpupool's device plugin
// (src/k8s/plugin.c, over gRPC's C core) against it. It follows the kubelet
// double contract shared with the grpc-js double (tests/k8s/kubelet-double.js);
// tests/k8s/test-device-plugin.sh runs either against the plugin's test
// fixture and checks what it prints.
//
//	kubelet-double-go --dir DIR --resource NAME --allocate N [--timeout-ms 10000]
//
// The scenario, in the kubelet's order: serve Registration on
// DIR/kubelet.sock; admit one Register (GetDevicePluginOptions called back
// inside it); ListAndWatch; GetPreferredAllocation when offered; Allocate;
// PreStartContainer when required; a kubelet restart (stop, wipe the
// sockets, serve again) and the re-registration it must bring; ListAndWatch
// again until a device turns Unhealthy. One JSON line per step on stdout
// (events.go). Exit 0: every step passed; 1: a step failed or timed out
// (every wait is bounded by --timeout-ms), with one line on stderr saying
// which and why; 2: bad usage.
//
// The message and service code is generated at build time from
// src/k8s/deviceplugin/api.proto by protoc-gen-go and protoc-gen-go-grpc
// into the build folder as package gpupool/deviceplugin/v1beta1
// (tests/k8s/build-go-double.sh builds it all offline from Debian packages).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	pb "gpupool/deviceplugin/v1beta1"
)

const usage = "usage: kubelet-double-go --dir DIR --resource NAME --allocate N [--timeout-ms MS]"

type options struct {
	dir      string
	resource string
	allocate int
	timeout  time.Duration
}

func main() {
	opt, err := parseOptions(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-double-go: %s (%s)\n", oneLine(err), usage)
		os.Exit(2)
	}
	s := &session{opt: opt, out: &eventWriter{}}
	err = s.run()
	s.close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-double-go: %s\n", oneLine(err))
		os.Exit(1)
	}
}

func parseOptions(args []string) (options, error) {
	fs := flag.NewFlagSet("kubelet-double-go", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "", "the kubelet's device-plugin folder")
	resource := fs.String("resource", "", "the resource the plugin must register")
	allocate := fs.Int("allocate", 0, "how many devices to allocate")
	timeoutMs := fs.Int("timeout-ms", 10000, "the bound of every wait, in ms")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	switch {
	case fs.NArg() > 0:
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case *dir == "":
		return options{}, errors.New("--dir is missing")
	case *resource == "":
		return options{}, errors.New("--resource is missing")
	case *allocate < 1:
		return options{}, fmt.Errorf("--allocate must be 1 or more (got %d)", *allocate)
	case *timeoutMs < 1:
		return options{}, fmt.Errorf("--timeout-ms must be 1 or more (got %d)", *timeoutMs)
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return options{}, fmt.Errorf("--dir %q: %w", *dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return options{}, fmt.Errorf("--dir %q is not an existing folder", *dir)
	}
	return options{abs, *resource, *allocate, time.Duration(*timeoutMs) * time.Millisecond}, nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// session is the scenario's state; close releases whatever is open.
type session struct {
	opt     options
	out     *eventWriter
	kubelet *registration
	plugin  *plugin
	watch   *watch
	// the last list printed (step 3), from which step 4 chooses
	lastList []device
}

// close ends the session in order: the stream, the plugin's connection,
// then the Registration server once its calls are answered.
func (s *session) close() {
	s.watch.close()
	s.plugin.close()
	s.kubelet.close()
	s.watch, s.plugin, s.kubelet = nil, nil, nil
}

func (s *session) run() error {
	if err := s.register(); err != nil {
		return err
	}
	if err := s.list("list"); err != nil {
		return err
	}
	ids, err := s.choose()
	if err != nil {
		return err
	}
	if err := s.allocate(ids); err != nil {
		return err
	}
	if err := s.preStart(ids); err != nil {
		return err
	}
	if err := s.restart(); err != nil {
		return err
	}
	if err := s.list("list2"); err != nil {
		return err
	}
	return s.waitUnhealthy()
}

// register: steps 1 and 2, serve Registration and admit the plugin.
func (s *session) register() (err error) {
	if s.kubelet, err = startRegistration(s.opt.dir, s.opt.resource, s.opt.timeout); err != nil {
		return fmt.Errorf("serving Registration: %w", err)
	}
	if err := s.out.emit(plainEvent{"listening"}); err != nil {
		return err
	}
	if s.plugin, err = s.kubelet.wait(); err != nil {
		return err
	}
	return s.out.emit(registeredEvent{"registered", s.plugin.endpoint, s.plugin.resource,
		pluginOptions{s.plugin.options.GetPreStartRequired(),
			s.plugin.options.GetGetPreferredAllocationAvailable()}})
}

// list: steps 3 and 8, open ListAndWatch and print its first list as event.
func (s *session) list(event string) error {
	var err error
	if s.watch, err = startWatch(s.plugin.client, s.opt.timeout); err != nil {
		return err
	}
	resp, err := s.watch.next(time.Now().Add(s.opt.timeout))
	if err != nil {
		return err
	}
	devices, err := devicesOf(resp)
	if err != nil {
		return fmt.Errorf("ListAndWatch: %w", err)
	}
	s.lastList = devices
	return s.out.emit(listEvent{event, devices})
}

// choose: step 4, the ids to allocate: the plugin's preferred ones when it
// offers GetPreferredAllocation, else the first healthy ones.
func (s *session) choose() ([]string, error) {
	var available []string
	for _, d := range s.lastList {
		if d.Health == healthy {
			available = append(available, d.ID)
		}
	}
	n := s.opt.allocate
	if len(available) < n {
		return nil, fmt.Errorf("the list has %d healthy devices, %d are to be allocated",
			len(available), n)
	}
	if !s.plugin.options.GetGetPreferredAllocationAvailable() {
		return available[:n], nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opt.timeout)
	defer cancel()
	resp, err := s.plugin.client.GetPreferredAllocation(ctx, &pb.PreferredAllocationRequest{
		ContainerRequests: []*pb.ContainerPreferredAllocationRequest{{
			AvailableDeviceIDs:   available,
			MustIncludeDeviceIDs: []string{},
			AllocationSize:       int32(n),
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("GetPreferredAllocation: %w", err)
	}
	if len(resp.GetContainerResponses()) != 1 {
		return nil, fmt.Errorf("GetPreferredAllocation: %d container responses for 1 request",
			len(resp.GetContainerResponses()))
	}
	ids := resp.GetContainerResponses()[0].GetDeviceIDs()
	if err := checkPreferred(ids, available, n); err != nil {
		return nil, fmt.Errorf("GetPreferredAllocation: %w", err)
	}
	return ids, s.out.emit(idsEvent{"preferred", append([]string{}, ids...)})
}

// checkPreferred: n distinct ids, each one of those available.
func checkPreferred(ids, available []string, n int) error {
	if len(ids) != n {
		return fmt.Errorf("%d ids %q, want %d", len(ids), ids, n)
	}
	offered := map[string]bool{}
	for _, id := range available {
		offered[id] = true
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !offered[id] {
			return fmt.Errorf("id %q was not among the available ones", id)
		}
		if seen[id] {
			return fmt.Errorf("id %q given twice", id)
		}
		seen[id] = true
	}
	return nil
}

// allocate: step 5, one container request of ids.
func (s *session) allocate(ids []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.opt.timeout)
	defer cancel()
	resp, err := s.plugin.client.Allocate(ctx, &pb.AllocateRequest{
		ContainerRequests: []*pb.ContainerAllocateRequest{{DevicesIds: ids}},
	})
	if err != nil {
		return fmt.Errorf("Allocate: %w", err)
	}
	if len(resp.GetContainerResponses()) != 1 {
		return fmt.Errorf("Allocate: %d container responses for 1 request",
			len(resp.GetContainerResponses()))
	}
	return s.out.emit(allocateEventOf(resp.GetContainerResponses()[0]))
}

// preStart: step 6, when the plugin asked for it.
func (s *session) preStart(ids []string) error {
	if !s.plugin.options.GetPreStartRequired() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opt.timeout)
	defer cancel()
	if _, err := s.plugin.client.PreStartContainer(ctx,
		&pb.PreStartContainerRequest{DevicesIds: ids}); err != nil {
		return fmt.Errorf("PreStartContainer: %w", err)
	}
	return s.out.emit(plainEvent{"prestart"})
}

// restart: step 7, a kubelet restart: everything closes, the folder's
// sockets are wiped, Registration is served again, and the plugin must
// register again; the time counts from just before the wipe.
func (s *session) restart() (err error) {
	s.watch.close()
	s.plugin.close()
	s.kubelet.kill()
	s.watch, s.plugin, s.kubelet = nil, nil, nil
	start := time.Now()
	if err := wipeSockets(s.opt.dir); err != nil {
		return fmt.Errorf("kubelet restart: %w", err)
	}
	if s.kubelet, err = startRegistration(s.opt.dir, s.opt.resource, s.opt.timeout); err != nil {
		return fmt.Errorf("kubelet restart: serving Registration: %w", err)
	}
	if s.plugin, err = s.kubelet.wait(); err != nil {
		return fmt.Errorf("after the kubelet restart: %w", err)
	}
	return s.out.emit(msEvent{"reregistered", time.Since(start).Milliseconds()})
}

// waitUnhealthy: the rest of step 8, until a list with an Unhealthy device.
func (s *session) waitUnhealthy() error {
	if err := s.out.emit(plainEvent{"waiting-health"}); err != nil {
		return err
	}
	start := time.Now()
	deadline := start.Add(s.opt.timeout)
	for {
		resp, err := s.watch.next(deadline)
		if err != nil {
			return fmt.Errorf("waiting for an Unhealthy device: %w", err)
		}
		devices, err := devicesOf(resp)
		if err != nil {
			return fmt.Errorf("ListAndWatch: %w", err)
		}
		for _, d := range devices {
			if d.Health == unhealthy {
				return s.out.emit(unhealthyEvent{"unhealthy", time.Since(start).Milliseconds(), devices})
			}
		}
		fmt.Fprintln(os.Stderr, "kubelet-double-go: a new list, every device still Healthy")
	}
}
