#!/usr/bin/env python3
"""The Prometheus rules and the Grafana dashboard against what hipstack-smid really exports.

Usage: test_monitoring.py --smid HIPSTACK_SMID --captures CAPTURES_DIR
                          --fake-nvml LIBNVIDIA_ML --nvml-scripts SCRIPTS_DIR

1. promtool check rules and promtool test rules (containers/prometheus/);
2. the rules' own shape: severities, summary and description naming the GPU and node, and every
   alert with a firing and a quiet case in the unit tests, every recording rule's value tested;
3. the dashboard's structure (containers/grafana/hipstack-dashboard.json): valid JSON, unique
   panel ids, every panel and query on the ${datasource} variable, the three rows, the variables,
   no overlapping panels, row panels filtered by their variables;
4. hipstack-smid started on every bundled capture and on each script of the fake NVML (the
   NVIDIA backend's names: the values are scripted, the names are the daemon's), /metrics scraped and checked with promtool check metrics; the union of the
   metric names is what the daemon exports;
5. every metric name in the rules' expressions (and annotation queries) and in the dashboard's
   queries (targets and templating) is exported, produced by a recording rule of the rules file,
   or Prometheus's own `up`; unknown names are reported with their rule or panel;
6. with /usr/bin/prometheus: a real server loads the rules and scrapes the daemon on the
   constructed faults capture; the expected alerts (and only they) go pending or firing, and every
   dashboard query runs without an error.
A self-test first proves the extractor and the checks find planted mistakes.

Exit: 0 pass, 1 fail, 77 skip (no promtool, or no python3-yaml).
"""
import argparse
import copy
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from moving_firmware import MovingFirmware  # noqa: E402 (shared with monitor-daemon/tests)
from promql_names import PromQLError, metric_names, split_args  # noqa: E402 (beside this file)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RULES = os.path.join(ROOT, "containers", "prometheus", "hipstack-rules.yaml")
RULES_TEST = os.path.join(ROOT, "containers", "prometheus", "hipstack-rules.test.yaml")
DASHBOARD = os.path.join(ROOT, "containers", "grafana", "hipstack-dashboard.json")
# Series Prometheus makes itself for every target; the rules and the dashboard may use them.
PROMETHEUS_OWN = {"up"}
# Names a rule may use only as an `or` branch that the full series profile feeds (the rule still
# works on the default profile through its other branch): HipstackGpuEccUncorrectable's per-block
# RAS sum, for a GPU whose total is unknown because a block is unreadable.
FULL_PROFILE_FALLBACKS = {"hipstack_gpu_ras_uncorrectable_total"}
ROWS = ("Fleet overview", "Per node", "Per GPU")
SEVERITIES = {"critical", "warning", "info"}

def annotation_queries(text):
    """PromQL inside `printf "..." ... | query` of an alert template (%q and %s as placeholders)."""
    out = []
    for m in re.finditer(r'printf\s+"((?:[^"\\]|\\.)*)"[^}]*?\|\s*query', text):
        fmt = m.group(1).replace('\\"', '"')
        out.append(re.sub(r"%[qsdv]", '"x"', fmt))
    return out


# ---------------------------------------------------------------------------------------------
# The rules and the dashboard

def load_yaml(path):
    import yaml
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def rules_of(doc):
    for group in doc.get("groups", []):
        for rule in group.get("rules", []):
            yield group["name"], rule


def recorded_names(doc):
    return {r["record"] for _, r in rules_of(doc) if "record" in r}


def rule_queries(doc):
    """(where, query) for every expression of the rules file."""
    for group, rule in rules_of(doc):
        where = f"rule {rule.get('alert') or rule.get('record')} (group {group})"
        yield where, rule["expr"]
        for key, text in (rule.get("annotations") or {}).items():
            for q in annotation_queries(text):
                yield f"{where}, annotation {key}", q


def all_panels(dashboard):
    for p in dashboard.get("panels", []):
        yield p
        for inner in p.get("panels", []) or []:  # a collapsed row keeps its panels inside
            yield inner


def no_duplicate_keys(pairs):
    """json.load's object hook: a key given twice (Grafana keeps the last, silently) is an error."""
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError(f"keys given twice in one object: {', '.join(repeated)} (in {dict(pairs).get('title', '?')!r})")
    return dict(pairs)


def needs_full_profile(panel):
    """A panel of detail the default series profile leaves out says so in its description."""
    return "full profile" in (panel.get("description") or "")


def dashboard_queries(dashboard, full=None):
    """(where, query) of the panels (full None: all; True: those marked as needing the full profile;
    False: the others, with the template variables)."""
    for p in all_panels(dashboard):
        if full is not None and needs_full_profile(p) != full:
            continue
        for t in p.get("targets", []) or []:
            for key in ("expr", "query"):
                if isinstance(t.get(key), str) and t[key].strip():
                    yield f"panel '{p.get('title')}' (id {p.get('id')}) target {t.get('refId')}", t[key]
    for v in dashboard.get("templating", {}).get("list", []) if full is not True else []:
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        for text in {q, v.get("definition")} - {None, ""}:
            yield f"variable '{v.get('name')}'", text


def unknown_metrics(queries, known):
    problems = []
    for where, q in queries:
        try:
            names = metric_names(q)
        except PromQLError as e:
            problems.append(f"{where}: cannot read {q!r}: {e}")
            continue
        if not names and "vector(" not in q and "absent(" not in q:
            problems.append(f"{where}: no metric name found in {q!r}")
        for name in sorted(names - known):
            problems.append(f"{where}: metric {name} is neither exported by hipstack-smid nor recorded by the rules ({q!r})")
    return problems


def check_dashboard(d):
    """Structure problems of the dashboard (a list of strings, empty when fine)."""
    errors = []
    if not isinstance(d.get("schemaVersion"), int) or not 36 <= d["schemaVersion"] <= 39:
        errors.append(f"schemaVersion {d.get('schemaVersion')!r} is not 36..39")
    variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        errors.append("no template variable 'datasource' of type datasource querying prometheus")
    for name, label in (("node", "host"), ("gpu", "gpu")):
        v = variables.get(name)
        q = v.get("query") if v else None
        q = q.get("query") if isinstance(q, dict) else q
        if not v or v.get("type") != "query" or not re.fullmatch(rf"label_values\(.+,\s*{label}\)", q or ""):
            errors.append(f"variable '{name}' is not label_values(..., {label})")
        elif not _on_variable(v.get("datasource")):
            errors.append(f"variable '{name}' does not use the datasource variable")
    ids, rows, boxes = {}, [], []
    current_row = None
    for p in all_panels(d):
        title = f"panel '{p.get('title')}' (id {p.get('id')})"
        if p.get("id") in ids:
            errors.append(f"{title}: id {p.get('id')} also used by panel '{ids[p['id']]}'")
        ids[p.get("id")] = p.get("title")
        if not _on_variable(p.get("datasource")):
            errors.append(f"{title}: datasource {p.get('datasource')!r} is not the ${{datasource}} variable")
        g = p.get("gridPos") or {}
        if not all(isinstance(g.get(k), int) for k in "hwxy") or g["x"] < 0 or g["x"] + g["w"] > 24:
            errors.append(f"{title}: bad gridPos {g}")
        else:
            for other, og in boxes:
                if g["x"] < og["x"] + og["w"] and og["x"] < g["x"] + g["w"] and g["y"] < og["y"] + og["h"] and og["y"] < g["y"] + g["h"]:
                    errors.append(f"{title} overlaps {other}")
            boxes.append((title, g))
        if p.get("type") == "row":
            rows.append(p.get("title", ""))
            current_row = p.get("title", "")
            continue
        targets = p.get("targets") or []
        if not targets or not all((t.get("expr") or "").strip() for t in targets):
            errors.append(f"{title}: no query, or an empty one")
        for t in targets:
            if not _on_variable(t.get("datasource")):
                errors.append(f"{title} target {t.get('refId')}: datasource is not the ${{datasource}} variable")
            expr = t.get("expr") or ""
            if current_row and current_row.startswith("Per node") and "$node" not in expr:
                errors.append(f"{title} target {t.get('refId')}: a per-node panel not filtered by $node")
            if current_row and current_row.startswith("Per GPU") and not ("$node" in expr and "$gpu" in expr):
                errors.append(f"{title} target {t.get('refId')}: a per-GPU panel not filtered by $node and $gpu")
    found = [next((r for r in rows if r.startswith(want)), None) for want in ROWS]
    for want, row in zip(ROWS, found):
        if row is None:
            errors.append(f"no row '{want}' (rows: {rows})")
    if None not in found and [rows.index(r) for r in found] != sorted(rows.index(r) for r in found):
        errors.append(f"rows out of order: {rows}")
    return errors


def _on_variable(ds):
    return isinstance(ds, dict) and ds.get("uid") in ("${datasource}", "$datasource") or ds in ("${datasource}", "$datasource")


def check_rules_shape(doc, tests):
    """Alerts need a severity, a summary and a description naming the GPU and node; each alert a
    firing and a quiet unit-test case; each recording rule a tested value."""
    errors = []
    fired, quiet, tested = set(), set(), set()
    for t in tests.get("tests", []):
        for a in t.get("alert_rule_test", []) or []:
            (fired if a.get("exp_alerts") else quiet).add(a["alertname"])
        for e in t.get("promql_expr_test", []) or []:
            tested |= metric_names(e["expr"])
    for group, rule in rules_of(doc):
        if "record" in rule:
            if ":" not in rule["record"]:
                errors.append(f"recording rule {rule['record']}: not named level:metric:operation")
            if rule["record"] not in tested:
                errors.append(f"recording rule {rule['record']}: no promql_expr_test checks its value")
            continue
        name = rule["alert"]
        labels, notes = rule.get("labels") or {}, rule.get("annotations") or {}
        if labels.get("severity") not in SEVERITIES:
            errors.append(f"alert {name}: severity {labels.get('severity')!r} is not one of {sorted(SEVERITIES)}")
        if "for" not in rule:
            errors.append(f"alert {name}: no for: duration")
        if not notes.get("summary") or not notes.get("description"):
            errors.append(f"alert {name}: needs summary and description annotations")
        if rule["expr"].lstrip().startswith("absent("):
            needed = ()  # no target, so no instance to name: the job is in the expression
        elif "exporter" in group:
            needed = ("$labels.instance",)
        else:
            needed = ("$labels.host", "$labels.gpu", "$labels.uuid", "$labels.bdf")
        for label in needed:
            if label not in notes.get("description", ""):
                errors.append(f"alert {name}: description does not name {label}")
        if name not in fired:
            errors.append(f"alert {name}: no unit test where it fires")
        if name not in quiet:
            errors.append(f"alert {name}: no unit test where it stays quiet")
    return errors


# ---------------------------------------------------------------------------------------------
# The daemon

class Daemon:
    def __init__(self, smid, sysfs_root, work, env=None, profile="default"):
        self.config = os.path.join(work, "smid.conf")
        with open(self.config, "w") as f:
            # Window looks every 100 ms: the activity metrics exist after the second one.
            f.write("http_listen = 127.0.0.1:0\ngrpc_listen = off\ndbus = off\nwindow_interval_ms = 100\n"
                    "metrics_profile = %s\n" % profile)
        self.err_path = os.path.join(work, "smid.err")
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen([smid, "--config", self.config, "--sysfs-root", sysfs_root],
                                     stdout=subprocess.DEVNULL, stderr=self.err, env=env)
        self.port = None
        deadline = time.time() + 15
        while time.time() < deadline and self.port is None:
            m = re.search(r"listening on .* \(port (\d+)\)", self.stderr())
            if m:
                self.port = int(m.group(1))
            elif self.proc.poll() is not None:
                break
            else:
                time.sleep(0.05)
        if self.port is None:
            self.stop()
            raise RuntimeError(f"hipstack-smid did not start on {sysfs_root}: {self.stderr()}")

    def stderr(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def get(self, path, timeout=5):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def metrics_when_ready(self, family=None):
        """/metrics once the daemon is ready and, when given, once `family` has a sample (the
        activity metrics need two window looks)."""
        deadline = time.time() + 20
        while self.get("/readyz")[0] != 200:
            if time.time() > deadline:
                raise RuntimeError("hipstack-smid not ready within 20 s")
            time.sleep(0.1)
        while True:
            status, page = self.get("/metrics")
            if status != 200:
                raise RuntimeError(f"/metrics answered {status}")
            if family is None or re.search(r"^%s\{" % re.escape(family), page, re.M):
                return page
            if time.time() > deadline:
                raise RuntimeError(f"no {family} sample within 20 s")
            time.sleep(0.1)


    def stop(self):
        """SIGTERM to our own child by PID; its exit status (0 expected)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()
        return self.proc.returncode


def exported_names(page):
    names = set()
    for line in page.splitlines():
        if line and not line.startswith("#"):
            names.add(re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", line).group(0))
    return names


def scrape_everything(args, promtool, work, profile):
    """{source: (gpu count, names)} for every capture and fake NVML script under a series profile
    (docs/daemon.md, "Series profiles"); problems found."""
    results, problems = {}, []
    sources = []
    for dirpath, dirnames, _ in os.walk(args.captures):
        if os.path.basename(dirpath) == "sys":  # a capture: CAPTURE/sys (and maybe CAPTURE/proc)
            dirnames[:] = []
            sources.append((os.path.relpath(os.path.dirname(dirpath), args.captures), dirpath, None))
    sources.sort()
    empty = os.path.join(work, "no-amd", "sys")
    os.makedirs(empty, exist_ok=True)
    waits = {}  # source -> the activity family it must come to export
    for script in sorted(os.listdir(args.nvml_scripts)):
        path = os.path.join(args.nvml_scripts, script)
        env = dict(os.environ, HIPSTACK_NVML_LIBRARY=args.fake_nvml, HIPSTACK_FAKE_NVML_SCRIPT=path)
        sources.append((f"fake-nvml/{script}", empty, env))
        with open(path) as f:
            if re.search(r"^\d+\.gpm\.supported\s*=\s*yes", f.read(), re.M):
                waits[f"fake-nvml/{script}"] = "hipstack_gpu_sm_active_ratio"
    # Every capture's gpu_metrics stands still, so none exports activity over a window: one copy of
    # an MI300X capture whose card0 table moves as a running GPU's does.
    moving_root = os.path.join(work, "moving-" + profile, "sys")
    shutil.copytree(os.path.join(args.captures, "constructed/mi300x-8gpu-spx-nps1/sys"), moving_root, symlinks=True)
    moving = MovingFirmware(os.path.join(moving_root, "class/drm/card0/device/gpu_metrics"), gfx_percent=50,
                            mem_percent=20, pcie_gbps=8, xgmi_kb=1024)
    sources.append(("moving firmware (MI300X)", moving_root, None))
    waits["moving firmware (MI300X)"] = "hipstack_gpu_graphics_active_ratio"
    for name, sysfs_root, env in sources:
        d = None
        try:
            d = Daemon(args.smid, sysfs_root, work, env, profile)
            if sysfs_root == moving_root:
                with moving:
                    page = d.metrics_when_ready(waits[name])
            else:
                page = d.metrics_when_ready(waits.get(name))
        except RuntimeError as e:
            problems.append(f"{name}: {e}")
            continue
        finally:
            rc = d.stop() if d else None
            if rc not in (0, None):
                problems.append(f"{name}: hipstack-smid exited {rc} on SIGTERM: {d.stderr()[-500:]}")
        lint = subprocess.run([promtool, "check", "metrics"], input=page, text=True, capture_output=True)
        if lint.returncode != 0:
            problems.append(f"{name}: promtool check metrics: {lint.stdout}{lint.stderr}")
        gpus = len(re.findall(r"^hipstack_gpu_up\{", page, re.M))
        results[name] = (gpus, exported_names(page))
    return results, problems


# ---------------------------------------------------------------------------------------------
# A real Prometheus with the rules, scraping the daemon on the faults capture

FAULTS_EXPECTED = {  # captures/constructed/mi300x-8gpu-faults/README.md: one planted fault per GPU
    ("HipstackGpuEccUncorrectable", "1", "", "firing"),   # ue 2 in umc
    ("HipstackGpuBadPagesPending", "3", "", "pending"),   # 2 pending pages
    ("HipstackGpuPcieLinkDegraded", "5", "width", "pending"),  # x8 of x16
    ("HipstackGpuPcieLinkDegraded", "5", "speed", "pending"),  # 16 of 32 GT/s, busy
    ("HipstackGpuHot", "6", "junction", "pending"),       # 98 °C, limit 100 °C
    ("HipstackGpuHealthCheckFailed", "1", "", "pending"),  # memory.uncorrectable_ecc FAIL
    ("HipstackGpuHealthCheckFailed", "4", "", "pending"),  # memory.bad_page_threshold FAIL
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prometheus_check(args, prometheus, dashboard, work):
    faults = os.path.join(args.captures, "constructed", "mi300x-8gpu-faults", "sys")
    problems = []
    os.makedirs(os.path.join(work, "e2e"))
    d = Daemon(args.smid, faults, os.path.join(work, "e2e"))
    prom = None
    try:
        d.metrics_when_ready()
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
                    f"rule_files: [{json.dumps(RULES)}]\n"
                    "scrape_configs:\n  - job_name: hipstack-smid\n"
                    f"    static_configs: [{{targets: ['127.0.0.1:{d.port}']}}]\n")
        log_path = os.path.join(work, "prometheus.log")
        url = None
        for _ in range(3):
            port = free_port()
            log = open(log_path, "w")
            prom = subprocess.Popen([prometheus, f"--config.file={config}", f"--storage.tsdb.path={work}/data",
                                     f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=log)
            deadline = time.time() + 20
            while time.time() < deadline and prom.poll() is None:
                with open(log_path, errors="replace") as f:
                    if "Server is ready to receive web requests" in f.read():
                        url = f"http://127.0.0.1:{port}"
                        break
                time.sleep(0.1)
            log.close()
            if url:
                break
            _stop(prom)
            prom = None
        if not url:
            with open(log_path, errors="replace") as f:
                return [f"prometheus did not start: {f.read()[-1500:]}"]

        def query(q):
            try:
                with urllib.request.urlopen(f"{url}/api/v1/query?query={urllib.parse.quote(q)}", timeout=10) as r:
                    return json.load(r)
            except urllib.error.HTTPError as e:
                return json.loads(e.read().decode() or "{}")

        seen, deadline = None, time.time() + 40
        while time.time() < deadline:
            answer = query("ALERTS")
            seen = {(s["metric"]["alertname"], s["metric"].get("gpu", ""),
                     s["metric"].get("sensor", s["metric"].get("degraded", "")), s["metric"]["alertstate"])
                    for s in answer.get("data", {}).get("result", [])}
            if seen == FAULTS_EXPECTED:
                break
            time.sleep(0.5)
        if seen != FAULTS_EXPECTED:
            problems.append(f"faults capture: alerts {sorted(seen or [])}, expected {sorted(FAULTS_EXPECTED)}")
        # Recording rules built on other recording rules settle an evaluation or two later than the
        # alerts (more on a loaded machine): wait for them too, up to a deadline.
        wanted = {"sum(host:hipstack_gpus:count)": 8.0, "sum(host:hipstack_gpus_hot:count)": 1.0,
                  "count(gpu:hipstack_gpu_temperature_critical_celsius)": 16.0,
                  'sum(up{job="hipstack-smid"})': 1.0}
        values, deadline = {}, time.time() + 30
        while True:
            for q in wanted:
                result = query(q).get("data", {}).get("result", [])
                values[q] = float(result[0]["value"][1]) if result else None
            if values == wanted or time.time() > deadline:
                break
            time.sleep(0.5)
        for q, want in wanted.items():
            if values[q] != want:
                problems.append(f"faults capture: {q} = {values[q]}, expected {want}")
        # Every dashboard query runs (variables as Grafana would fill them for "All").
        for where, q in dashboard_queries(dashboard):
            if q.startswith("label_values("):
                q = split_args(q[len("label_values("):-1])[0]
            q = q.replace("$__rate_interval", "1m").replace("$__interval", "15s").replace("$__range", "1h")
            q = q.replace("$node", ".*").replace("$gpu", ".*")
            answer = query(q)
            if answer.get("status") != "success":
                problems.append(f"{where}: Prometheus refused {q!r}: {answer.get('error')}")
    finally:
        if prom:
            _stop(prom)
        if d.stop() != 0:
            problems.append(f"faults capture: hipstack-smid did not exit 0: {d.stderr()[-500:]}")
    return problems


def _stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------------------------------------

EXTRACTOR_CASES = [
    ('sum by (host, gpu) (rate(foo_total{job="x",instance=~"a.*"}[5m] offset 1h)) / on(host) group_left(model) bar > bool 3',
     {"foo_total", "bar"}),
    ("a and b unless ignoring (c) d or e", {"a", "b", "d", "e"}),
    ('label_values(hipstack_gpu_up{host=~"$node"}, gpu)', {"hipstack_gpu_up"}),
    ("label_values(host)", set()),
    ('{__name__="by_name_only", job="j"}', {"by_name_only"}),
    ("max_over_time(x:y:z[1d:5m]) @ end()", {"x:y:z"}),
    ("1e9 * 0x1f + Inf - NaN + 1.5e-3 + .5", set()),
    ("histogram_quantile(0.9, sum by (le) (rate(h_bucket[$__rate_interval])))", {"h_bucket"}),
    ("SUM BY (host) (m1) OR m2", {"m1", "m2"}),
    ("a # c_in_comment\n + b", {"a", "b"}),
    ("'single' + \"dq \\\" q\" + `raw`", set()),
    ('sum without (block) (m) > 0 or count_values("value", n)', {"m", "n"}),
    ("x offset -5m + y offset 1h30m", {"x", "y"}),
    ('label_replace(t, "sensor", "edge", "", "") or topk(3, u) by (host)', {"t", "u"}),
    ("sum(v) by (host) / ignoring(reason) group_left () (w > 0)", {"v", "w"}),
    ("avg_over_time((floor(s{vendor=\"nvidia\"} / 4) % 2)[5m:])", {"s"}),
    ("${datasource_metric} + [[old]] + $var", {"x"}),  # a variable in a metric position reads as "x"
]


def self_test(dashboard, rules_doc, tests_doc, known):
    """The extractor and the checks must catch planted mistakes."""
    errors = []
    for expr, want in EXTRACTOR_CASES:
        got = metric_names(expr)
        if got != want:
            errors.append(f"extractor: {expr!r} gave {sorted(got)}, expected {sorted(want)}")
    for bad in ('{__name__=~"hipstack_.*"}', "sum(rate(x[5m]"):
        try:
            metric_names(bad)
            errors.append(f"extractor: {bad!r} should be refused")
        except PromQLError:
            pass
    planted = copy.deepcopy(dashboard)
    victim = next(p for p in planted["panels"] if p.get("type") != "row")
    victim["targets"].append({"refId": "Z", "datasource": victim["datasource"],
                              "expr": 'sum by (host) (hipstack_gpu_not_exported_watts{host=~"$node"})'})
    found = unknown_metrics(dashboard_queries(planted), known)
    if not any("hipstack_gpu_not_exported_watts" in f and victim["title"] in f for f in found):
        errors.append(f"a planted unknown metric in panel '{victim['title']}' was not reported: {found}")
    rules = copy.deepcopy(rules_doc)
    rules["groups"][0]["rules"].append({"alert": "Planted", "expr": "hipstack_gpu_bogus_total > 0"})
    found = unknown_metrics(rule_queries(rules), known)
    if not any("Planted" in f and "hipstack_gpu_bogus_total" in f for f in found):
        errors.append(f"a planted unknown metric in a rule was not reported: {found}")
    broken = copy.deepcopy(dashboard)
    broken["panels"][2]["id"] = broken["panels"][1]["id"]
    broken["panels"][3]["datasource"] = {"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}
    broken["panels"] = [p for p in broken["panels"] if not p.get("title", "").startswith("Per GPU")]
    found = "\n".join(check_dashboard(broken))
    for what in ("also used by", "is not the ${datasource} variable", "no row 'Per GPU'"):
        if what not in found:
            errors.append(f"the dashboard check missed a planted '{what}' problem: {found}")
    rules = copy.deepcopy(rules_doc)
    rules["groups"][-1]["rules"].append({"alert": "Untested", "expr": "up == 0", "for": "1m",
                                         "labels": {"severity": "page"}, "annotations": {}})
    found = "\n".join(check_rules_shape(rules, tests_doc))
    for what in ("Untested: severity", "Untested: needs summary", "Untested: no unit test where it fires"):
        if what not in found:
            errors.append(f"the rules check missed '{what}': {found}")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smid", required=True)
    ap.add_argument("--captures", required=True)
    ap.add_argument("--fake-nvml", required=True, help="fake libnvidia-ml.so.1 (smi-lib/tests/fake_nvml): NVIDIA GPUs")
    ap.add_argument("--nvml-scripts", required=True, help="its scripts folder")
    args = ap.parse_args()
    promtool = shutil.which("promtool")
    if not promtool:
        print("SKIP: promtool (Debian package prometheus) is needed")
        return 77
    try:
        import yaml  # noqa: F401
    except ImportError:
        print("SKIP: python3-yaml is needed")
        return 77
    failures = []

    def step(title, problems):
        print(f"{'ok  ' if not problems else 'FAIL'} {title}")
        for p in problems:
            print(f"     {p}")
        failures.extend(problems)

    for what in (["check", "rules", RULES], ["test", "rules", RULES_TEST]):
        r = subprocess.run([promtool, *what], capture_output=True, text=True, cwd=os.path.dirname(RULES))
        step(f"promtool {' '.join(what[:2])} {os.path.basename(what[2])}",
             [] if r.returncode == 0 else [(r.stdout + r.stderr).strip()])
    rules_doc, tests_doc = load_yaml(RULES), load_yaml(RULES_TEST)
    try:
        with open(DASHBOARD, encoding="utf-8") as f:
            dashboard = json.load(f, object_pairs_hook=no_duplicate_keys)
    except (OSError, ValueError) as e:
        step("dashboard is valid JSON", [str(e)])
        return 1
    step("rules: severities, annotations naming GPU and node, every alert fires and stays quiet in a test",
         check_rules_shape(rules_doc, tests_doc))
    panels = [p for p in all_panels(dashboard)]
    step(f"dashboard structure ({len(panels)} panels, rows {', '.join(ROWS)})", check_dashboard(dashboard))

    with tempfile.TemporaryDirectory(prefix="hipstack-monitoring-") as work:
        results, problems = scrape_everything(args, promtool, work, "default")
        full_results, full_problems = scrape_everything(args, promtool, work, "full")
        problems += full_problems
        supported = {k: v for k, v in results.items() if v[0] > 0}
        for name, (gpus, names) in sorted(results.items()):
            print(f"     {name}: {gpus} GPUs, {len(names)} metric names" + ("" if gpus else " (no GPU: not supported)"))
        amd = [k for k in supported if not k.startswith("fake-nvml/")]
        if len(amd) < 10 or "constructed/mi300x-8gpu-faults" not in amd:
            problems.append(f"only {len(amd)} AMD captures with GPUs: {sorted(amd)}")
        if not any(k.startswith("fake-nvml/") for k in supported):
            problems.append("no NVIDIA GPU from the fake NVML")
        step(f"hipstack-smid on {len(results)} sources ({len(supported)} with GPUs), promtool check metrics",
             problems)
        exported = set().union(*(names for _, names in results.values())) if results else set()
        exported_full = set().union(*(names for _, names in full_results.values())) if full_results else set()
        print(f"     {len(exported)} names exported by the default profile, {len(exported_full)} by the full one")
        recorded = recorded_names(rules_doc)
        clash = sorted(recorded & exported_full)
        step(f"{len(recorded)} recording rules named apart from the {len(exported)} exported names",
             [f"recording rule {c} shadows an exported metric" for c in clash])
        known = exported | recorded | PROMETHEUS_OWN
        step("self-test: the extractor and the checks catch planted mistakes",
             self_test(dashboard, rules_doc, tests_doc, known))
        rq, dq = list(rule_queries(rules_doc)), list(dashboard_queries(dashboard, full=False))
        detail = list(dashboard_queries(dashboard, full=True))
        used = set().union(*(metric_names(q) for _, q in rq + dq + detail))
        fallbacks_exported = FULL_PROFILE_FALLBACKS <= exported_full and not FULL_PROFILE_FALLBACKS & exported
        step(f"rules: {len(rq)} queries use only metrics of the default profile (and its named full-profile fallbacks)",
             unknown_metrics(rq, known | FULL_PROFILE_FALLBACKS)
             + ([] if fallbacks_exported else [f"{sorted(FULL_PROFILE_FALLBACKS)}: not exported by the full profile alone"]))
        step(f"dashboard: {len(dq)} queries use only metrics of the default profile or recorded ones",
             unknown_metrics(dq, known))
        known_full = exported_full | recorded | PROMETHEUS_OWN
        full_only = exported_full - exported
        panels_marked = {where.split(" target ")[0] for where, _ in detail}
        panels_needing = {where.split(" target ")[0] for where, q in detail if metric_names(q) & full_only}
        marked_needlessly = [f"{panel}: marked as needing the full profile, but none of its queries does"
                             for panel in sorted(panels_marked - panels_needing)]
        step(f"dashboard: {len(detail)} queries of panels marked 'full profile' use the full profile's metrics",
             unknown_metrics(detail, known_full) + marked_needlessly)
        print(f"     {len(used & exported)} exported and {len(used & recorded)} recorded names used")

        prometheus = shutil.which("prometheus") or ("/usr/bin/prometheus" if os.access("/usr/bin/prometheus", os.X_OK) else None)
        if prometheus:
            step("a real Prometheus with the rules on the faults capture: the expected alerts, every dashboard query runs",
                 prometheus_check(args, prometheus, dashboard, work))
        else:
            step("a real Prometheus with the rules on the faults capture",
                 ["no prometheus binary (scripts/deps.sh test installs prometheus)"])
    print(f"{'FAIL' if failures else 'PASS'}: {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
