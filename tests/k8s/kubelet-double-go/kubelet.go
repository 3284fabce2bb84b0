// kubelet.go — the kubelet's half of the device plugin API v1beta1 as the
// grpc-go double plays it: the Registration service on DIR/kubelet.sock, the
// connection to a plugin made inside its Register call (as the kubelet's
// device manager does: blocking dial, 10 s, authority "localhost",
// GetDevicePluginOptions before Register is answered), a ListAndWatch
// stream read on a goroutine of its own, and the wipe of the folder that a
// kubelet restart does. main.go runs the scenario with these pieces.
//
// Ownership: startRegistration's result is closed by its caller
// (registration.close also closes every plugin connection that arrived and
// was not taken); a plugin taken with wait is closed by its taker; a watch
// is closed by its starter.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	pb "gpupool/deviceplugin/v1beta1"

	"google.golang.org/grpc"
)

const (
	apiVersion    = "v1beta1"
	kubeletSocket = "kubelet.sock"
	healthy       = "Healthy"
	unhealthy     = "Unhealthy"
	// The kubelet's dial timeout for a plugin's socket.
	pluginDialTimeout = 10 * time.Second
)

// plugin is a registered plugin: what it said and the connection to it.
type plugin struct {
	endpoint string
	resource string
	options  *pb.DevicePluginOptions
	conn     *grpc.ClientConn
	client   pb.DevicePluginClient
}

func (p *plugin) close() {
	if p != nil && p.conn != nil {
		p.conn.Close()
	}
}

// admission is the outcome of one Register call.
type admission struct {
	p   *plugin
	err error
}

// registration is one run of the kubelet's Registration server.
type registration struct {
	pb.UnimplementedRegistrationServer
	dir      string
	resource string
	timeout  time.Duration
	server   *grpc.Server
	arrived  chan admission
}

// startRegistration removes a stale DIR/kubelet.sock, listens there and
// serves Registration on a goroutine. Like a kubelet that stops, close
// leaves the socket file behind (the next "kubelet" wipes it).
func startRegistration(dir, resource string, timeout time.Duration) (*registration, error) {
	path := filepath.Join(dir, kubeletSocket)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("removing the stale %s: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	r := &registration{
		dir:      dir,
		resource: resource,
		timeout:  timeout,
		server:   grpc.NewServer(),
		arrived:  make(chan admission, 8),
	}
	pb.RegisterRegistrationServer(r.server, r)
	go r.server.Serve(l) // returns when close stops the server
	return r, nil
}

// Register is the kubelet's handler: check the request, connect to the
// plugin and ask its options, and only then answer.
func (r *registration) Register(_ context.Context, req *pb.RegisterRequest) (*pb.Empty, error) {
	p, err := r.admit(req)
	select {
	case r.arrived <- admission{p, err}:
	default:
		fmt.Fprintf(os.Stderr, "kubelet-double-go: one Register too many (endpoint %q), ignored\n",
			req.GetEndpoint())
		p.close()
	}
	if err != nil {
		return nil, err
	}
	return &pb.Empty{}, nil
}

func (r *registration) admit(req *pb.RegisterRequest) (*plugin, error) {
	if req.GetVersion() != apiVersion {
		return nil, fmt.Errorf("Register: version %q is not supported (want %q)",
			req.GetVersion(), apiVersion)
	}
	if req.GetResourceName() != r.resource {
		return nil, fmt.Errorf("Register: resource_name %q (want %q)", req.GetResourceName(), r.resource)
	}
	if !isPlainName(req.GetEndpoint()) {
		return nil, fmt.Errorf("Register: endpoint %q is not a file name in %s", req.GetEndpoint(), r.dir)
	}
	conn, err := dialPlugin(filepath.Join(r.dir, req.GetEndpoint()))
	if err != nil {
		return nil, fmt.Errorf("Register: connecting to the plugin at %s: %w", req.GetEndpoint(), err)
	}
	client := pb.NewDevicePluginClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	opts, err := client.GetDevicePluginOptions(ctx, &pb.Empty{})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("Register: GetDevicePluginOptions: %w", err)
	}
	return &plugin{req.GetEndpoint(), req.GetResourceName(), opts, conn, client}, nil
}

func isPlainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsRune(name, '/')
}

// dialPlugin connects as the kubelet does: insecure, blocking, 10 s, with
// the authority "localhost" (without it grpc-go would send the socket's
// path as :authority, which strict HTTP/2 servers reject).
func dialPlugin(path string) (*grpc.ClientConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pluginDialTimeout)
	defer cancel()
	return grpc.DialContext(ctx, "unix://"+path, grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithAuthority("localhost"))
}

// wait gives the next Register's outcome: the plugin, or why it was refused.
func (r *registration) wait() (*plugin, error) {
	select {
	case a := <-r.arrived:
		return a.p, a.err
	case <-time.After(r.timeout):
		return nil, fmt.Errorf("no Register on %s within %d ms",
			filepath.Join(r.dir, kubeletSocket), r.timeout.Milliseconds())
	}
}

// close stops the server once the calls in progress are answered (so that
// a plugin refused still reads why), at most 1 s; kill stops it at once,
// like a kubelet that dies. Both close the connections of plugins that
// registered but were never taken.
func (r *registration) close() {
	if r == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		r.server.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	r.kill()
}

func (r *registration) kill() {
	if r == nil {
		return
	}
	r.server.Stop()
	for {
		select {
		case a := <-r.arrived:
			a.p.close()
		default:
			return
		}
	}
}

// wipeSockets removes every socket file in dir, as a starting kubelet does
// in its device-plugin folder.
func wipeSockets(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSocket == 0 {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil &&
			!errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", e.Name(), err)
		}
	}
	return nil
}

// watch is an open ListAndWatch stream; a goroutine hands each response on.
type watch struct {
	cancel  context.CancelFunc
	lists   chan *pb.ListAndWatchResponse
	ended   chan error
	timeout time.Duration
}

func startWatch(client pb.DevicePluginClient, timeout time.Duration) (*watch, error) {
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := client.ListAndWatch(ctx, &pb.Empty{})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("ListAndWatch: %w", err)
	}
	w := &watch{cancel, make(chan *pb.ListAndWatchResponse, 16), make(chan error, 1), timeout}
	go func() {
		for {
			resp, err := stream.Recv()
			if err != nil {
				w.ended <- err
				return
			}
			select {
			case w.lists <- resp:
			case <-ctx.Done():
				return
			}
		}
	}()
	return w, nil
}

// next waits, until deadline, for the stream's next list.
func (w *watch) next(deadline time.Time) (*pb.ListAndWatchResponse, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case resp := <-w.lists:
		return resp, nil
	case err := <-w.ended:
		select { // a list sent before the end still counts
		case resp := <-w.lists:
			w.ended <- err
			return resp, nil
		default:
		}
		return nil, fmt.Errorf("ListAndWatch ended: %w", err)
	case <-timer.C:
		return nil, fmt.Errorf("no ListAndWatch response within %d ms", w.timeout.Milliseconds())
	}
}

func (w *watch) close() {
	if w != nil {
		w.cancel()
	}
}
