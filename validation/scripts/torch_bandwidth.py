# torch's side-by-side numbers: device-to-device copy (read + write counted, as stream's copy) and
# pinned host<->device copies, best of 20 after a warm-up, timed with CUDA events.
import json, torch
def best(fn, reps=20):
    fn(); torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t = []
    for _ in range(reps):
        s.record(); fn(); e.record(); e.synchronize(); t.append(s.elapsed_time(e))
    return min(t)
n = 1 << 30
a = torch.empty(n, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
d2d = 2 * n / (best(lambda: b.copy_(a)) * 1e-3) / 1e9
m = 256 << 20
h = torch.empty(m, dtype=torch.uint8, pin_memory=True); d = torch.empty(m, dtype=torch.uint8, device="cuda")
h2d = m / (best(lambda: d.copy_(h, non_blocking=True)) * 1e-3) / 1e9
d2h = m / (best(lambda: h.copy_(d, non_blocking=True)) * 1e-3) / 1e9
print(json.dumps({"test": "torch", "torch": torch.__version__, "device": torch.cuda.get_device_name(),
                  "d2d_copy_gbps_read_plus_write": round(d2d, 1), "pinned_h2d_gbps": round(h2d, 2),
                  "pinned_d2h_gbps": round(d2h, 2)}))
