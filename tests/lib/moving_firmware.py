"""An amdgpu gpu_metrics table (v1.6, 1664 bytes) that moves as a running GPU's firmware moves it,
for tests of the activity over a window (docs/activity.md): every 10 ms, ten more firmware samples
on accumulation_counter at the chosen graphics and memory activity and PCIe bandwidth, `xgmi_kb`
more KB over each XGMI link each way, and 10 ms on system_clock_counter. Each table replaces the
file atomically (a reader sees the old one or the new one). Use as a context manager."""
import os
import threading

# Byte offsets and widths in gpu_metrics v1.6 (the kernel's struct gpu_metrics_v1_6).
SYSTEM_CLOCK, ACCUMULATION_COUNTER, GFX_ACTIVITY_ACC, MEM_ACTIVITY_ACC, PCIE_BANDWIDTH_ACC = 24, 32, 68, 72, 80
XGMI_READ, XGMI_WRITE = 128, 192  # 8 links of u64 KB each


class MovingFirmware:
    def __init__(self, path, gfx_percent, mem_percent=0, pcie_gbps=0, xgmi_kb=0):
        self.path = path
        self.gfx, self.mem, self.pcie, self.xgmi = gfx_percent, mem_percent, pcie_gbps, xgmi_kb
        with open(path, "rb") as f:
            self.table = bytearray(f.read())
        found = (int.from_bytes(self.table[0:2], "little"), self.table[2], self.table[3])
        if found != (1664, 1, 6):
            raise AssertionError("%s: expected a gpu_metrics v1.6 table (1664 bytes), got %d bytes v%d.%d" % ((path,) + found))
        self.ticks = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def put(self, offset, width, value):
        self.table[offset:offset + width] = (value % (1 << (8 * width))).to_bytes(width, "little")

    def write(self):
        samples = self.ticks * 10
        self.put(SYSTEM_CLOCK, 8, self.ticks * 10_000_000)
        self.put(ACCUMULATION_COUNTER, 4, samples)
        self.put(GFX_ACTIVITY_ACC, 4, samples * self.gfx)
        self.put(MEM_ACTIVITY_ACC, 4, samples * self.mem)
        self.put(PCIE_BANDWIDTH_ACC, 8, samples * self.pcie)
        for link in range(8):
            self.put(XGMI_READ + 8 * link, 8, self.ticks * self.xgmi)
            self.put(XGMI_WRITE + 8 * link, 8, self.ticks * self.xgmi)
        tmp = self.path + ".new"
        with open(tmp, "wb") as f:
            f.write(self.table)
        os.replace(tmp, self.path)

    def run(self):
        while not self.stop.wait(0.01):
            self.ticks += 1
            self.write()

    def __enter__(self):
        self.write()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
