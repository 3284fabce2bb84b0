// events.go — what the grpc-go kubelet double prints: one JSON object per
// line on stdout, written in one write(2) each so that the test driver
// (tests/k8s/test-device-plugin.sh) sees every line as soon as it is made.
// The shapes are the kubelet double contract's, the same as the grpc-js
// double's (tests/k8s/kubelet-double.js); the structs keep the keys in the
// contract's order. Nothing else ever goes to stdout.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	pb "gpupool/deviceplugin/v1beta1"
)

type plainEvent struct {
	Event string `json:"event"`
}

type pluginOptions struct {
	PreStartRequired                bool `json:"preStartRequired"`
	GetPreferredAllocationAvailable bool `json:"getPreferredAllocationAvailable"`
}

type registeredEvent struct {
	Event    string        `json:"event"`
	Endpoint string        `json:"endpoint"`
	Resource string        `json:"resource"`
	Options  pluginOptions `json:"options"`
}

type device struct {
	ID     string  `json:"id"`
	Health string  `json:"health"`
	NUMA   []int64 `json:"numa"`
}

type listEvent struct {
	Event   string   `json:"event"`
	Devices []device `json:"devices"`
}

type idsEvent struct {
	Event string   `json:"event"`
	IDs   []string `json:"ids"`
}

type mount struct {
	ContainerPath string `json:"containerPath"`
	HostPath      string `json:"hostPath"`
	ReadOnly      bool   `json:"readOnly"`
}

type deviceSpec struct {
	ContainerPath string `json:"containerPath"`
	HostPath      string `json:"hostPath"`
	Permissions   string `json:"permissions"`
}

type allocateEvent struct {
	Event       string            `json:"event"`
	Envs        map[string]string `json:"envs"`
	Mounts      []mount           `json:"mounts"`
	Devices     []deviceSpec      `json:"devices"`
	Annotations map[string]string `json:"annotations"`
}

type msEvent struct {
	Event string `json:"event"`
	Ms    int64  `json:"ms"`
}

type unhealthyEvent struct {
	Event   string   `json:"event"`
	Ms      int64    `json:"ms"`
	Devices []device `json:"devices"`
}

// eventWriter serialises lines from the main goroutine and gRPC's handler
// goroutines.
type eventWriter struct {
	mu sync.Mutex
}

func (w *eventWriter) emit(v interface{}) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode ends the line
		return fmt.Errorf("encoding an event: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := os.Stdout.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing an event to stdout: %w", err)
	}
	return nil
}

// devicesOf turns a ListAndWatch response into the contract's device list,
// checking what the kubelet relies on: every device has an ID and a health
// of "Healthy" or "Unhealthy".
func devicesOf(resp *pb.ListAndWatchResponse) ([]device, error) {
	devices := make([]device, 0, len(resp.GetDevices()))
	for i, d := range resp.GetDevices() {
		if d.GetID() == "" {
			return nil, fmt.Errorf("device %d of the list has no ID", i)
		}
		if d.GetHealth() != healthy && d.GetHealth() != unhealthy {
			return nil, fmt.Errorf("device %q has health %q (want %q or %q)",
				d.GetID(), d.GetHealth(), healthy, unhealthy)
		}
		numa := make([]int64, 0, len(d.GetTopology().GetNodes()))
		for _, n := range d.GetTopology().GetNodes() {
			numa = append(numa, n.GetID())
		}
		devices = append(devices, device{ID: d.GetID(), Health: d.GetHealth(), NUMA: numa})
	}
	return devices, nil
}

func allocateEventOf(r *pb.ContainerAllocateResponse) allocateEvent {
	ev := allocateEvent{
		Event:       "allocate",
		Envs:        map[string]string{},
		Mounts:      []mount{},
		Devices:     []deviceSpec{},
		Annotations: map[string]string{},
	}
	for k, v := range r.GetEnvs() {
		ev.Envs[k] = v
	}
	for _, m := range r.GetMounts() {
		ev.Mounts = append(ev.Mounts, mount{m.GetContainerPath(), m.GetHostPath(), m.GetReadOnly()})
	}
	for _, d := range r.GetDevices() {
		ev.Devices = append(ev.Devices, deviceSpec{d.GetContainerPath(), d.GetHostPath(), d.GetPermissions()})
	}
	for k, v := range r.GetAnnotations() {
		ev.Annotations[k] = v
	}
	return ev
}
