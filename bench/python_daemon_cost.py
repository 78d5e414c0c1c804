#!/usr/bin/python3
"""What answering hipstack's Python layers from the node's hipstack-smid would cost a call (issue 41,
item 5), against the direct call they make: a Python gRPC client's round trip to the daemon over its
unix socket (GetMetrics of GPU 0's two power metrics, what nvmlDeviceGetPowerUsage reads) and
hipstack.pynvml's nvmlDeviceGetPowerUsage, same process, best of three rounds each.

Usage: bench/python_daemon_cost.py SOCKET [N]
  SOCKET: the daemon's gRPC unix socket (hipstack-smid --grpc-listen unix:SOCKET), reading the same
  GPUs (or capture: HIPSTACK_SYSFS_ROOT) as this process. Needs Debian's python3-grpcio and
  python3-grpc-tools (the stubs are generated from the repository's .proto into a scratch folder).
"""
import os
import subprocess
import sys
import tempfile
import timeit

import grpc

import hipstack.pynvml as ours

PROTO_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "wire", "proto")


def stubs(scratch):
    """monitor_pb2 and monitor_pb2_grpc, generated into `scratch` (the package name `hipstack` of the
    .proto would shadow hipstack's Python package, so the modules are imported by file name)."""
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I" + PROTO_ROOT, "--python_out=" + scratch,
                    "--grpc_python_out=" + scratch, "hipstack/monitor/v1/monitor.proto"], check=True)
    folder = os.path.join(scratch, "hipstack/monitor/v1")
    service = os.path.join(folder, "monitor_pb2_grpc.py")
    with open(service) as f:
        text = f.read().replace("from hipstack.monitor.v1 import monitor_pb2 as", "import monitor_pb2 as")
    with open(service, "w") as f:
        f.write(text)
    sys.path.insert(0, folder)
    import monitor_pb2  # noqa: E402 (generated above)
    import monitor_pb2_grpc  # noqa: E402
    return monitor_pb2, monitor_pb2_grpc


def main():
    socket = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    with tempfile.TemporaryDirectory() as scratch:
        pb, rpc = stubs(scratch)
        with grpc.insecure_channel("unix:" + socket) as channel:
            stub = rpc.MonitorStub(channel)
            request = pb.GetMetricsRequest(devices=["0"], metrics=["power_average", "power_current"])
            stub.GetMetrics(request)
            ours.nvmlInit()
            handle = ours.nvmlDeviceGetHandleByIndex(0)
            ours.nvmlDeviceGetPowerUsage(handle)
            through_daemon = min(timeit.repeat(lambda: stub.GetMetrics(request), number=n, repeat=3)) / n * 1e6
            direct = min(timeit.repeat(lambda: ours.nvmlDeviceGetPowerUsage(handle), number=n, repeat=3)) / n * 1e6
            ours.nvmlShutdown()
    print("hipstack-smid GetMetrics (gRPC, unix socket) %8.1f us a call" % through_daemon)
    print("hipstack.pynvml nvmlDeviceGetPowerUsage       %8.1f us a call   daemon/direct %.1fx" % (direct, through_daemon / direct))


if __name__ == "__main__":
    main()
