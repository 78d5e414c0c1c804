#!/usr/bin/python3
"""A fake kubelet: the pod-resources API v1 (List, Get, GetAllocatableResources) over a unix
socket, with Python's real gRPC server and stubs generated from the same proto hipstack-smid uses
(monitor-daemon/proto/kubelet/podresources/v1/api.proto).

Usage: fake_kubelet.py PROTO_DIR SOCKET STATE_JSON CALL_LOG

STATE_JSON is read again for every call, so a test changes what the kubelet says by replacing the
file. Its form:
  {"get": "ok" | "unimplemented" | "disabled",
   "pods": [{"name": "trainer-0", "namespace": "ml",
             "containers": [{"name": "worker",
                             "devices": [{"resource": "amd.com/gpu", "ids": ["0000:05:00.0"]}],
                             "claims": [{"name": "gpu", "namespace": "ml",
                                         "devices": [{"driver": "gpu.amd.com", "pool": "node-a",
                                                      "device": "gpu-1-129", "cdi": ["amd.com/gpu=x"]}]}]}]}]}
"get": "unimplemented" answers Get with UNIMPLEMENTED (a kubelet older than the method); "disabled"
with the plain error a kubelet whose KubeletPodResourcesGet gate is off returns. An unknown pod is
the kubelet's plain "not found" error. Each call appends "List", "Get NAMESPACE/POD" or
"GetAllocatableResources" to CALL_LOG. The socket is removed before binding, as the kubelet does.
"""
import json
import os
import shutil
import sys
import threading
import tempfile
import time
from concurrent import futures


def load_stubs(proto_dir):
    from grpc_tools import protoc
    out = tempfile.mkdtemp(prefix="fake-kubelet-stubs-")
    rc = protoc.main(["protoc", "-I" + proto_dir, "--python_out=" + out, "--grpc_python_out=" + out,
                      "kubelet/podresources/v1/api.proto"])
    if rc != 0:
        raise RuntimeError("protoc failed on kubelet/podresources/v1/api.proto")
    sys.path.insert(0, out)
    try:
        from kubelet.podresources.v1 import api_pb2, api_pb2_grpc
    finally:
        # Both modules are loaded: the generated files are not needed again, and left behind they
        # would pile up in /tmp, one folder per fake kubelet started.
        sys.path.remove(out)
        shutil.rmtree(out, ignore_errors=True)
    return api_pb2, api_pb2_grpc


def main():
    proto_dir, socket_path, state_path, call_log = sys.argv[1:5]
    import grpc
    pb, rpc = load_stubs(proto_dir)

    def state():
        with open(state_path) as f:
            return json.load(f)

    def record(text):
        with open(call_log, "a") as f:
            f.write(text + "\n")

    def pod_message(pod):
        message = pb.PodResources(name=pod["name"], namespace=pod["namespace"])
        for c in pod.get("containers", []):
            container = message.containers.add(name=c["name"])
            for d in c.get("devices", []):
                container.devices.add(resource_name=d["resource"], device_ids=d["ids"])
            for claim in c.get("claims", []):
                dynamic = container.dynamic_resources.add(claim_name=claim["name"], claim_namespace=claim["namespace"])
                for d in claim["devices"]:
                    resource = dynamic.claim_resources.add(driver_name=d["driver"], pool_name=d["pool"],
                                                           device_name=d["device"])
                    for name in d.get("cdi", []):
                        resource.cdi_devices.add(name=name)
        return message

    in_flight, peak, in_flight_lock = [0], [0], threading.Lock()

    class Lister(rpc.PodResourcesListerServicer):
        def List(self, request, context):
            record("List")
            return pb.ListPodResourcesResponse(pod_resources=[pod_message(p) for p in state()["pods"]])

        def Get(self, request, context):
            record("Get %s/%s" % (request.pod_namespace, request.pod_name))
            current = state()
            # "get_delay_s": each Get answers that late; CALL_LOG.peak holds the most Gets in
            # progress at once.
            with in_flight_lock:
                in_flight[0] += 1
                peak[0] = max(peak[0], in_flight[0])
                with open(call_log + ".peak", "w") as f:
                    f.write("%d\n" % peak[0])
            try:
                time.sleep(current.get("get_delay_s", 0))
            finally:
                with in_flight_lock:
                    in_flight[0] -= 1
            mode = current.get("get", "ok")
            if mode == "unimplemented":
                context.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not found: v1.PodResourcesLister/Get")
            if mode == "disabled":
                context.abort(grpc.StatusCode.UNKNOWN, "PodResources API Get method disabled")
            for p in current["pods"]:
                if p["name"] == request.pod_name and p["namespace"] == request.pod_namespace:
                    return pb.GetPodResourcesResponse(pod_resources=pod_message(p))
            context.abort(grpc.StatusCode.UNKNOWN, "pod %s in namespace %s not found" % (request.pod_name, request.pod_namespace))

        def GetAllocatableResources(self, request, context):
            record("GetAllocatableResources")
            return pb.AllocatableResourcesResponse()

    if os.path.exists(socket_path):
        os.unlink(socket_path)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
    rpc.add_PodResourcesListerServicer_to_server(Lister(), server)
    server.add_insecure_port("unix:" + socket_path)
    server.start()
    print("serving", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
