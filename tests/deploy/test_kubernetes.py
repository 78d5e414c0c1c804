#!/usr/bin/python3
"""containers/kubernetes/: the plain manifests (kustomize) and the Helm chart, rendered and
validated offline with Debian 12's packages only (docs/deploy-kubernetes.md, "How it is tested").

- The chart is rendered by k8s_render (Go text/template + sprig, as helm's engine; built here with
  Debian's golang-go) for several values files (defaults, TLS on, ServiceMonitor off, NVIDIA, most
  other knobs); the coalesced values are checked against values.schema.json (python3-jsonschema).
- The plain manifests are rendered by `kubectl kustomize` where kubectl exists (it is not a Debian
  package), else by a small reader of kustomization.yaml (resources and configMapGenerator only).
  kubectl's output is recorded in kustomize-recorded/ with the SHA-256 of its inputs: where kubectl
  exists, kubectl, the recording and the reader must agree; elsewhere the reader must agree with the
  recording, and the NVIDIA overlay (kustomize's patches) is checked on the recording, which must
  have been made from the manifests as they are (else the test fails: record again with kubectl,
  `test_kubernetes.py --source-dir . --project-version X --record-kustomize`).
- Every rendered object is validated by k8s_schema.py (core kinds against python3-kubernetes's
  models, the ServiceMonitor against a strict schema), and the objects must fit together
  (selectors, port names, the ConfigMap, the daemon's configuration keys and metric names, the
  TLS files), with the security settings docs/deploy-kubernetes.md promises.
- Negative self-checks prove that the validators refuse unknown fields, wrong types, missing
  required fields and bad values.

Usage: test_kubernetes.py --source-dir DIR --project-version X.Y.Z [--work-dir DIR] [unittest args]
Exit 77 (skipped) when a needed Debian package is missing (scripts/deps.sh test installs them).
No test skips inside a run that passes: a missing tool of theirs (yamllint) fails.
"""
import argparse
import copy
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import jsonschema
    import yaml
    sys.path.insert(0, HERE)
    import k8s_schema
except ImportError as e:  # python3-kubernetes, python3-jsonschema, python3-yaml
    print(f"SKIP: {e} (scripts/deps.sh test installs python3-kubernetes python3-jsonschema python3-yaml)")
    sys.exit(77)

SRC = WORK = VERSION = None
RENDERER = None
KUBECTL = shutil.which("kubectl")
CHART = K8S = None
VARIANTS = ["defaults", "tls", "no-servicemonitor", "nvidia", "custom", "attribution"]
# The host paths attribution mounts (read-only), by volume name.
ATTRIBUTION_VOLUMES = {"pod-resources", "pod-logs", "container-logs", "host-proc"}
_cache = {}


def setup_paths(args):
    global SRC, WORK, VERSION, CHART, K8S
    SRC, VERSION = os.path.abspath(args.source_dir), args.project_version
    WORK = args.work_dir or tempfile.mkdtemp(prefix="hipstack-k8s-")
    os.makedirs(WORK, exist_ok=True)
    K8S = os.path.join(SRC, "containers", "kubernetes")
    CHART = os.path.join(K8S, "helm", "hipstack-smid")


def build_renderer():
    """go build of k8s_render in GOPATH mode against Debian's Go packages: nothing is downloaded."""
    global RENDERER
    if not shutil.which("go"):
        print("SKIP: no go (scripts/deps.sh test installs golang-go golang-github-masterminds-sprig-dev "
              "golang-k8s-sigs-yaml-dev)")
        sys.exit(77)
    env = dict(os.environ, GO111MODULE="off", GOPATH="/usr/share/gocode", GOFLAGS="", GOPROXY="off",
               GOCACHE=os.path.join(WORK, "gocache"), CGO_ENABLED="0")
    RENDERER = os.path.join(WORK, "k8s_render")
    proc = subprocess.run(["go", "build", "-o", RENDERER, "."], cwd=os.path.join(HERE, "k8s_render"),
                          env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        missing = "cannot find package" in proc.stderr
        print(("SKIP: " if missing else "") + "building k8s_render failed:\n" + proc.stderr)
        sys.exit(77 if missing else 1)


def render_chart(values=(), name="hipstack-smid", namespace="hipstack", expect_ok=True):
    """(documents, coalesced values, NOTES.txt) of the chart with these values files."""
    key = (tuple(values), name, namespace)
    if expect_ok and key in _cache:
        return copy.deepcopy(_cache[key])
    out_values, out_notes = os.path.join(WORK, "values.json"), os.path.join(WORK, "notes.txt")
    cmd = [RENDERER, "-chart", CHART, "-name", name, "-namespace", namespace, "-values-out", out_values,
           "-notes-out", out_notes]
    for v in values:
        cmd += ["-f", v]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if not expect_ok:
        return proc
    if proc.returncode != 0:
        raise AssertionError(f"{cmd}: exit {proc.returncode}\n{proc.stderr}")
    with open(out_values) as f:
        merged = json.load(f)
    with open(out_notes) as f:
        notes = f.read()
    result = (k8s_schema.load_documents(proc.stdout), merged, notes, proc.stdout)
    _cache[key] = copy.deepcopy(result)
    return result


def variant_files(variant):
    return [] if variant == "defaults" else [os.path.join(HERE, "k8s_values", variant + ".yaml")]


def write_values(text):
    fd, path = tempfile.mkstemp(suffix=".yaml", dir=WORK)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


class Unsupported(Exception):
    pass


def mini_kustomize(folder):
    """kustomization.yaml's resources and configMapGenerator, as kustomize builds them but without
    the name hash; any other field raises Unsupported (kubectl is then needed)."""
    with open(os.path.join(folder, "kustomization.yaml")) as f:
        kust = yaml.safe_load(f)
    unknown = set(kust) - {"apiVersion", "kind", "resources", "configMapGenerator"}
    if unknown:
        raise Unsupported(f"{folder}/kustomization.yaml uses {sorted(unknown)}")
    docs = []
    for resource in kust.get("resources", []):
        path = os.path.join(folder, resource)
        if os.path.isdir(path):
            docs += mini_kustomize(path)
        else:
            with open(path) as f:
                docs += k8s_schema.load_documents(f.read())
    for gen in kust.get("configMapGenerator", []):
        if set(gen) - {"name", "namespace", "files", "options"} or set(gen.get("options", {})) - {"labels"}:
            raise Unsupported(f"configMapGenerator {gen['name']} uses more than name/namespace/files/labels")
        data = {}
        for name in gen.get("files", []):
            with open(os.path.join(folder, name)) as f:
                data[os.path.basename(name)] = f.read()
        meta = {"name": gen["name"]}
        if "namespace" in gen:
            meta["namespace"] = gen["namespace"]
        if gen.get("options", {}).get("labels"):
            meta["labels"] = gen["options"]["labels"]
        docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})
    return docs


def kubectl_kustomize(folder):
    proc = subprocess.run([KUBECTL, "kustomize", folder], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"kubectl kustomize {folder}: exit {proc.returncode}\n{proc.stderr}")
    return k8s_schema.load_documents(proc.stdout)


RECORDED = os.path.join(HERE, "kustomize-recorded")
RECORDED_OVERLAYS = {"amd": "", "nvidia": "nvidia"}  # recording name -> folder below K8S


def kustomize_inputs_digest():
    """SHA-256 over every file kustomize reads (containers/kubernetes but the Helm chart)."""
    digest = hashlib.sha256()
    # Top-down with each folder's subfolders sorted in place: a deterministic order in which helm/
    # is really pruned (sorting os.walk's output would walk it all first).
    for folder, dirs, files in os.walk(K8S):
        dirs[:] = sorted(d for d in dirs if os.path.join(folder, d) != os.path.join(K8S, "helm"))
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, K8S).encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(f.read() + b"\0")
    return digest.hexdigest()


def recorded_kustomize(name):
    """kubectl kustomize's recorded output for K8S/RECORDED_OVERLAYS[name]; fails when the manifests
    changed since it was recorded."""
    with open(os.path.join(RECORDED, "inputs.sha256")) as f:
        recorded_digest = f.read().split()[0]
    if recorded_digest != kustomize_inputs_digest():
        raise AssertionError(f"{RECORDED} was recorded from other manifests than containers/kubernetes/ now: "
                             "record it again where kubectl exists (test_kubernetes.py --record-kustomize)")
    with open(os.path.join(RECORDED, f"{name}.yaml")) as f:
        return k8s_schema.load_documents(f.read())


def record_kustomize():
    if not KUBECTL:
        sys.exit("--record-kustomize needs kubectl")
    version = subprocess.run([KUBECTL, "version", "--client"], capture_output=True, text=True).stdout.split("\n")
    os.makedirs(RECORDED, exist_ok=True)
    for name, sub in RECORDED_OVERLAYS.items():
        proc = subprocess.run([KUBECTL, "kustomize", os.path.join(K8S, sub)], capture_output=True, text=True,
                              check=True, timeout=120)
        with open(os.path.join(RECORDED, f"{name}.yaml"), "w") as f:
            f.write(f"# kubectl kustomize containers/kubernetes/{sub} ({'; '.join(v for v in version if v)})\n")
            f.write("# made by tests/deploy/test_kubernetes.py --record-kustomize; do not edit\n")
            f.write(proc.stdout)
    with open(os.path.join(RECORDED, "inputs.sha256"), "w") as f:
        f.write(f"{kustomize_inputs_digest()}  containers/kubernetes/ (all files but helm/)\n")
    print(f"recorded {sorted(RECORDED_OVERLAYS)} in {RECORDED}")


def by_kind(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def one(docs, kind):
    found = by_kind(docs, kind)
    assert len(found) == 1, f"expected one {kind}, got {len(found)}"
    return found[0]


def doc_table_names(path, heading, column=1):
    """The backquoted names in one column of the tables under a heading of a docs/ file."""
    names, inside = set(), False
    with open(os.path.join(SRC, "docs", path)) as f:
        for line in f:
            if line.startswith("#"):
                inside = line.lstrip("#").strip().startswith(heading)
            elif inside and line.startswith("| "):
                cells = line.split("|")
                names.update(re.findall(r"`([a-z_0-9]+)`", cells[column]))
    return names


def parse_config(text):
    config = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            key, sep, value = line.partition("=")
            assert sep, f"config line without '=': {line!r}"
            config[key.strip()] = value.strip()
    return config


class Checks(unittest.TestCase):
    """Assertions shared by the chart and the plain manifests."""

    def assertValid(self, docs):
        errors = [e for i, d in enumerate(docs) for e in k8s_schema.validate(d, f"document {i}")]
        self.assertEqual(errors, [], "\n".join(errors))

    def check_fits_together(self, docs):
        """Selectors, ports, the ConfigMap and the daemon's configuration agree with each other."""
        ds, svc = one(docs, "DaemonSet"), one(docs, "Service")
        pod = ds["spec"]["template"]
        pod_labels = pod["metadata"]["labels"]
        namespace = ds["metadata"]["namespace"]
        for d in docs:
            if d["kind"] != "Namespace" and d["kind"] != "ServiceMonitor":
                self.assertEqual(d["metadata"].get("namespace"), namespace, d["kind"])
        self.assertLessEqual(ds["spec"]["selector"]["matchLabels"].items(), pod_labels.items())
        self.assertLessEqual(svc["spec"]["selector"].items(), pod_labels.items())
        container = pod["spec"]["containers"][0]
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        for p in svc["spec"]["ports"]:
            self.assertIn(p["targetPort"], ports, "Service targetPort names a container port")
        for sm in by_kind(docs, "ServiceMonitor"):
            self.assertLessEqual(sm["spec"]["selector"]["matchLabels"].items(), svc["metadata"]["labels"].items())
            self.assertIn(namespace, sm["spec"]["namespaceSelector"]["matchNames"])
            self.assertEqual([e["port"] for e in sm["spec"]["endpoints"]], ["metrics"])
            self.assertIn("metrics", [p["name"] for p in svc["spec"]["ports"]])
        for sa in by_kind(docs, "ServiceAccount"):
            self.assertEqual(pod["spec"]["serviceAccountName"], sa["metadata"]["name"])
        # The configuration file: mounted where --config points, keys the daemon knows.
        volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        cm_name = volumes["config"]["configMap"]["name"]
        cm = [c for c in by_kind(docs, "ConfigMap") if c["metadata"]["name"] == cm_name]
        self.assertEqual(len(cm), 1, f"ConfigMap {cm_name} is rendered")
        args = container["args"]
        self.assertEqual(container["command"], ["/opt/hipstack/sbin/hipstack-smid"])
        self.assertEqual(args[:2], ["--config", mounts["config"]["mountPath"] + "/hipstack-smid.conf"])
        config = parse_config(cm[0]["data"]["hipstack-smid.conf"])
        known = doc_table_names("daemon.md", "Configuration")
        self.assertGreater(len(known), 15, "the configuration table of docs/daemon.md was found")
        self.assertLessEqual(set(config), known, "every key is in docs/daemon.md's table")
        self.assertEqual(config["dbus"], "off")
        self.assertEqual(int(config["http_listen"].rpartition(":")[2]), ports["metrics"])
        if config["grpc_listen"] != "off":
            self.assertEqual(int(config["grpc_listen"].rpartition(":")[2]), ports["grpc"])
        if "metrics" in config:
            catalogue = doc_table_names("metrics.md", "Metric catalogue", column=2)
            self.assertGreater(len(catalogue), 100, "the catalogue table of docs/metrics.md was found")
            self.assertLessEqual({m.strip() for m in config["metrics"].split(",")}, catalogue)
        for key in ("tls_cert", "tls_key"):
            if key in config:
                folder, _, file = config[key].rpartition("/")
                volume = [n for n, m in mounts.items() if m["mountPath"] == folder]
                self.assertEqual(len(volume), 1, f"{key} {config[key]} lies in a mounted volume")
                secret = volumes[volume[0]]["secret"]
                self.assertIn(file, [item["path"] for item in secret["items"]])
        return config

    def check_security(self, ds):
        """No privilege: the settings docs/deploy-kubernetes.md lists. With attribution on, the
        container (not the pod) runs as uid 0 for the kubelet's socket and mounts its folders and
        the host's /proc read-only; every capability stays dropped."""
        spec = ds["spec"]["template"]["spec"]
        pod_sc = spec["securityContext"]
        self.assertIs(pod_sc["runAsNonRoot"], True)
        self.assertNotEqual(pod_sc["runAsUser"], 0)
        self.assertEqual(pod_sc["seccompProfile"], {"type": "RuntimeDefault"})
        for key in ("hostNetwork", "hostPID", "hostIPC"):
            self.assertFalse(spec.get(key, False), key)
        self.assertIs(spec["automountServiceAccountToken"], False)
        host_paths = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
        attribution = ATTRIBUTION_VOLUMES <= set(host_paths)
        for c in spec["containers"]:
            sc = c["securityContext"]
            self.assertIs(sc["allowPrivilegeEscalation"], False)
            self.assertIs(sc["readOnlyRootFilesystem"], True)
            self.assertFalse(sc.get("privileged", False))
            self.assertEqual(sc["capabilities"], {"drop": ["ALL"]})
            if attribution:
                self.assertEqual((sc.get("runAsUser"), sc.get("runAsNonRoot")), (0, False))
            else:
                self.assertNotIn("runAsUser", sc)
            self.assertIn("requests", c["resources"])
            self.assertIn("limits", c["resources"])
            self.assertEqual(c["livenessProbe"]["httpGet"]["path"], "/healthz")
            self.assertEqual(c["readinessProbe"]["httpGet"]["path"], "/readyz")
            allowed = {"sys"} | (ATTRIBUTION_VOLUMES if attribution else set())
            self.assertLessEqual(set(host_paths), allowed, "no host path but /sys (and attribution's)")
            for m in c["volumeMounts"]:
                if m["name"] in host_paths:
                    self.assertIs(m.get("readOnly"), True, f"{m['name']} is mounted read-only")


class ValidatorSelfCheck(Checks):
    """The validators refuse what they must: otherwise a green run would prove nothing."""

    def good(self):
        return copy.deepcopy(one(render_chart()[0], "DaemonSet")), copy.deepcopy(one(render_chart()[0], "ServiceMonitor"))

    def assertRefused(self, doc, *fragments):
        errors = k8s_schema.validate(doc)
        self.assertTrue(errors, "refused")
        for fragment in fragments:
            self.assertTrue(any(fragment in e for e in errors), f"{fragment!r} not in {errors}")

    def test_good_objects_pass(self):
        ds, sm = self.good()
        self.assertEqual(k8s_schema.validate(ds) + k8s_schema.validate(sm), [])

    def test_unknown_fields(self):
        ds, _ = self.good()
        ds["spec"]["template"]["spec"]["containers"][0]["imagePullPolcy"] = "Always"
        self.assertRefused(ds, "containers[0].imagePullPolcy: unknown field")
        ds, _ = self.good()
        ds["spec"]["template"]["spec"]["securityContext"]["runAsNonroot"] = True
        self.assertRefused(ds, "securityContext.runAsNonroot: unknown field")
        ds, _ = self.good()
        ds["spec"]["extra"] = 1
        self.assertRefused(ds, "spec.extra: unknown field")

    def test_wrong_types(self):
        ds, _ = self.good()
        ds["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "9400"
        self.assertRefused(ds, "containerPort: expected int, got str")
        ds, _ = self.good()
        ds["metadata"]["labels"]["gpu"] = True  # an unquoted YAML true
        self.assertRefused(ds, "labels.gpu: expected str, got bool")
        ds, _ = self.good()
        ds["spec"]["template"]["spec"]["containers"][0]["args"] = "--config /etc/x"
        self.assertRefused(ds, "args: expected a list")
        ds, _ = self.good()
        ds["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] = "true"
        self.assertRefused(ds, "runAsNonRoot: expected bool")
        ds, _ = self.good()
        ds["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = [1]
        self.assertRefused(ds, "maxUnavailable: expected an integer or a string")
        ds, _ = self.good()
        ds["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = {"n": 1}
        self.assertRefused(ds, "limits.cpu: expected str")

    def test_missing_required_and_bad_values(self):
        ds, _ = self.good()
        del ds["spec"]["template"]["spec"]["containers"][0]["name"]
        self.assertRefused(ds, "`name`, must not be `None`")
        ds, _ = self.good()
        del ds["spec"]["selector"]
        self.assertRefused(ds, "`selector`, must not be `None`")
        ds, _ = self.good()
        ds["spec"]["template"]["spec"]["tolerations"][0]["operator"] = "Exist"
        self.assertRefused(ds, "'Exist' is not one of")
        ds, _ = self.good()
        ds["spec"]["template"]["spec"]["containers"][0]["ports"][0]["name"] = "prometheus-metrics"
        self.assertRefused(ds, "is not an IANA service name", "names port 'metrics'")
        ds, _ = self.good()
        ds["spec"]["template"]["spec"]["volumes"].pop()
        self.assertRefused(ds, "mounts volume 'sys', which the pod lacks")
        ds, _ = self.good()
        ds["spec"]["updateStrategy"]["type"] = "OnDelete"
        self.assertRefused(ds, "rollingUpdate may not be set")
        self.assertEqual(k8s_schema.validate({"apiVersion": "apps/v1", "kind": "Deployment"})[0][-11:], "(no schema)")

    def test_service_monitor_schema(self):
        _, sm = self.good()
        sm["spec"]["endpoints"][0]["scrapeInterval"] = "30s"
        self.assertRefused(sm, "'scrapeInterval' was unexpected")
        _, sm = self.good()
        sm["spec"]["endpoints"][0]["interval"] = 30
        self.assertRefused(sm, "30 is not of type 'string'")
        _, sm = self.good()
        sm["spec"]["endpoints"][0]["interval"] = "30 seconds"
        self.assertRefused(sm, "does not match")
        _, sm = self.good()
        sm["spec"]["endpoints"][0]["relabelings"][0]["action"] = "rename"
        self.assertRefused(sm, "'rename' is not one of")
        _, sm = self.good()
        sm["spec"]["selector"]["matchLabel"] = {}
        self.assertRefused(sm, "selector.matchLabel: unknown field")
        _, sm = self.good()
        sm["metadata"]["lables"] = {}
        self.assertRefused(sm, "metadata.lables: unknown field")

    def test_duplicate_keys_refused(self):
        with self.assertRaisesRegex(yaml.YAMLError, "duplicate key 'name'"):
            k8s_schema.load_documents("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  name: b\n")

    def test_values_schema_refuses(self):
        with open(os.path.join(CHART, "values.schema.json")) as f:
            validator = jsonschema.Draft7Validator(json.load(f))
        base = render_chart()[1]
        for change, fragment in [
            (lambda v: v.update(vendor="intel"), "'intel' is not one of"),
            (lambda v: v.update(extra=1), "'extra' was unexpected"),
            (lambda v: v["daemon"].update(httpPort="9400"), "'9400' is not of type 'integer'"),
            (lambda v: v["daemon"].update(fastIntervalMs=5), "5 is less than the minimum of 10"),
            (lambda v: v["daemon"].update(metrics=["GPU-busy"]), "does not match"),
            (lambda v: v["tls"].update(enabled=True), "'' is too short"),
            (lambda v: v["serviceMonitor"].update(interval="30"), "does not match"),
            (lambda v: v["image"].update(pullPolicy="always"), "'always' is not one of"),
        ]:
            values = copy.deepcopy(base)
            change(values)
            messages = [e.message for e in validator.iter_errors(values)]
            self.assertTrue(any(fragment in m for m in messages), f"{fragment!r} not in {messages}")


class HelmChart(Checks):
    def test_chart_version_is_project_version(self):
        with open(os.path.join(CHART, "Chart.yaml")) as f:
            chart = yaml.safe_load(f)
        self.assertEqual(chart["version"], VERSION, "Chart.yaml version")
        self.assertEqual(chart["appVersion"], VERSION, "Chart.yaml appVersion")
        self.assertEqual(chart["apiVersion"], "v2")

    def test_image_tag_follows_app_version(self):
        ds = one(render_chart()[0], "DaemonSet")
        self.assertEqual(ds["spec"]["template"]["spec"]["containers"][0]["image"], f"hipstack-exporter:{VERSION}")
        self.assertEqual(ds["metadata"]["labels"]["app.kubernetes.io/version"], VERSION)
        ds = one(render_chart(variant_files("custom"))[0], "DaemonSet")
        self.assertEqual(ds["spec"]["template"]["spec"]["containers"][0]["image"],
                         "registry.example.com/hipstack/hipstack-exporter:0.1.0-test")

    def test_values_and_schema(self):
        with open(os.path.join(CHART, "values.schema.json")) as f:
            schema = json.load(f)
        jsonschema.Draft7Validator.check_schema(schema)
        with open(os.path.join(CHART, "values.yaml")) as f:
            jsonschema.Draft7Validator(schema).validate(yaml.safe_load(f))
        for variant in VARIANTS:  # helm checks the coalesced values
            with self.subTest(variant=variant):
                jsonschema.Draft7Validator(schema).validate(render_chart(variant_files(variant))[1])

    def test_variants_valid_and_consistent(self):
        for variant in VARIANTS:
            with self.subTest(variant=variant):
                docs = render_chart(variant_files(variant))[0]
                self.assertValid(docs)
                self.check_fits_together(docs)
                self.check_security(one(docs, "DaemonSet"))
                kinds = sorted(d["kind"] for d in docs)
                want = ["ConfigMap", "DaemonSet", "Service", "ServiceAccount", "ServiceMonitor"]
                if variant == "no-servicemonitor":
                    want.remove("ServiceMonitor")
                self.assertEqual(kinds, want)

    def test_other_release_names(self):
        for name, namespace in [("hipstack", "monitoring"), ("gpu-hipstack-smid-prod", "kube-system")]:
            docs = render_chart([], name, namespace)[0]
            self.assertValid(docs)
            self.check_fits_together(docs)

    def test_defaults(self):
        docs, _, notes, _ = render_chart()
        spec = one(docs, "DaemonSet")["spec"]["template"]["spec"]
        self.assertEqual(spec["nodeSelector"], {"hipstack.io/gpu": "amd"})
        self.assertEqual({t["key"] for t in spec["tolerations"]}, {"amd.com/gpu", "nvidia.com/gpu"})
        self.assertNotIn("runtimeClassName", spec)
        self.assertEqual([v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v], ["/sys"])
        self.assertEqual(one(docs, "Service")["spec"]["clusterIP"], "None")
        self.assertEqual(parse_config(one(docs, "ConfigMap")["data"]["hipstack-smid.conf"])["grpc_listen"], "off")
        sm = one(docs, "ServiceMonitor")["spec"]["endpoints"][0]
        self.assertEqual(sm["relabelings"][0]["targetLabel"], "host")
        self.assertIn("kubectl label node NODE hipstack.io/gpu=amd", notes)
        self.assertIn("port-forward POD 9400", notes)

    def test_tls(self):
        docs, _, notes, _ = render_chart(variant_files("tls"))
        spec = one(docs, "DaemonSet")["spec"]["template"]["spec"]
        config = parse_config(one(docs, "ConfigMap")["data"]["hipstack-smid.conf"])
        self.assertEqual(config["grpc_listen"], "0.0.0.0:9401")
        self.assertEqual((config["tls_cert"], config["tls_key"]), ("/etc/hipstack/tls/tls.crt", "/etc/hipstack/tls/tls.key"))
        tls = [v for v in spec["volumes"] if v["name"] == "tls"][0]["secret"]
        self.assertEqual(tls["secretName"], "hipstack-smid-tls")
        self.assertEqual(tls["defaultMode"], 0o440)
        self.assertEqual(spec["securityContext"]["fsGroup"], 999, "the key is readable through the fsGroup")
        self.assertIn({"name": "grpc", "port": 9401, "targetPort": "grpc", "protocol": "TCP", "appProtocol": "grpc"},
                      one(docs, "Service")["spec"]["ports"])
        self.assertIn("--tls-ca CA.pem", notes)

    def test_nvidia(self):
        docs, _, notes, _ = render_chart(variant_files("nvidia"))
        spec = one(docs, "DaemonSet")["spec"]["template"]["spec"]
        self.assertEqual(spec["nodeSelector"], {"hipstack.io/gpu": "nvidia"})
        self.assertEqual(spec["runtimeClassName"], "nvidia")
        env = {e["name"]: e["value"] for e in spec["containers"][0]["env"]}
        self.assertEqual(env, {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "utility"})
        self.assertNotIn("nvidia.com/gpu", json.dumps(spec["containers"][0]["resources"]), "takes no GPU")
        self.assertIn("NVIDIA Container Toolkit", notes)

    def test_custom(self):
        docs = render_chart(variant_files("custom"))[0]
        ds = one(docs, "DaemonSet")
        spec = ds["spec"]["template"]["spec"]
        self.assertEqual(spec["nodeSelector"], {"feature.node.kubernetes.io/pci-0380_1002.present": "true"})
        self.assertEqual(spec["priorityClassName"], "system-node-critical")
        self.assertEqual(spec["runtimeClassName"], "amd")
        self.assertEqual(spec["securityContext"]["supplementalGroups"], [44, 109])
        self.assertNotIn("sys", [v["name"] for v in spec["volumes"]], "hostSys.enabled=false")
        self.assertEqual(ds["spec"]["updateStrategy"], {"type": "OnDelete"}, "null removed the default")
        self.assertEqual(spec["containers"][0]["args"][2:], ["--grpc-listen", "0.0.0.0:9500"])
        config = parse_config(one(docs, "ConfigMap")["data"]["hipstack-smid.conf"])
        self.assertEqual(config["metrics"], "temperature_junction, power_current, clock_sclk, gpu_busy, vram_used")
        self.assertEqual((config["fast_interval_ms"], config["read_deadline_ms"], config["max_streams"]),
                         ("2000", "3000", "8"))
        sm = one(docs, "ServiceMonitor")
        self.assertEqual(sm["metadata"]["namespace"], "monitoring")
        self.assertEqual(sm["metadata"]["labels"]["release"], "kube-prometheus-stack")
        self.assertEqual([r.get("targetLabel") for r in sm["spec"]["endpoints"][0]["relabelings"]], ["host", "node"])

    def test_attribution(self):
        docs = render_chart(variant_files("attribution"))[0]
        spec = one(docs, "DaemonSet")["spec"]["template"]["spec"]
        host_paths = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
        self.assertEqual(host_paths, {"sys": "/sys", "pod-resources": "/var/lib/kubelet/pod-resources",
                                      "pod-logs": "/srv/log/pods", "container-logs": "/srv/log/containers",
                                      "host-proc": "/proc"})
        mounts = {m["name"]: m["mountPath"] for m in spec["containers"][0]["volumeMounts"]}
        config = parse_config(one(docs, "ConfigMap")["data"]["hipstack-smid.conf"])
        self.assertEqual(config["attribution"], "on")
        self.assertEqual(config["attribution_interval_ms"], "5000")
        # The daemon's paths lie in the mounts: the socket in the kubelet's folder, pods/ and
        # containers/ below kubelet_log_dir, the host's /proc at procfs_root.
        self.assertEqual(config["kubelet_socket"], mounts["pod-resources"] + "/kubelet.sock")
        self.assertEqual((mounts["pod-logs"], mounts["container-logs"]),
                         (config["kubelet_log_dir"] + "/pods", config["kubelet_log_dir"] + "/containers"))
        self.assertEqual(config["procfs_root"], mounts["host-proc"])
        # Off (the default): none of it, and the daemon's own default (auto) finds no socket.
        defaults = render_chart()[0]
        self.assertFalse(ATTRIBUTION_VOLUMES & {v["name"] for v in one(defaults, "DaemonSet")["spec"]["template"]["spec"]["volumes"]})
        self.assertNotIn("attribution", parse_config(one(defaults, "ConfigMap")["data"]["hipstack-smid.conf"]))

    def test_config_changes_roll_the_pods(self):
        def checksum(values):
            return one(render_chart(values)[0], "DaemonSet")["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
        self.assertNotEqual(checksum([]), checksum(variant_files("custom")))
        self.assertEqual(checksum([]), checksum(variant_files("no-servicemonitor")))

    def test_refusals(self):
        for text, fragment in [
            ("tls:\n  enabled: true\n  secretName: s\n", "TLS is for the gRPC listener only"),
            ("grpc:\n  enabled: true\ntls:\n  enabled: true\n", "tls.secretName: name the kubernetes.io/tls Secret"),
            ("grpc:\n  enabled: true\n  port: 9400\n", "grpc.port: must differ"),
        ]:
            proc = render_chart([write_values(text)], expect_ok=False)
            self.assertEqual(proc.returncode, 1, proc.stderr)
            self.assertIn(fragment, proc.stderr)


class PlainManifests(Checks):
    def render(self, folder):
        if KUBECTL:
            return kubectl_kustomize(folder)
        try:
            return mini_kustomize(folder)
        except Unsupported:  # the overlay's patches: kubectl's recorded output of these very manifests
            name = next(n for n, sub in RECORDED_OVERLAYS.items() if os.path.join(K8S, sub).rstrip("/") == folder)
            return recorded_kustomize(name)

    def test_amd(self):
        docs = self.render(K8S)
        self.assertEqual(sorted(d["kind"] for d in docs),
                         ["ConfigMap", "DaemonSet", "Namespace", "Service", "ServiceAccount", "ServiceMonitor"])
        self.assertValid(docs)
        self.check_fits_together(docs)
        ds = one(docs, "DaemonSet")
        self.check_security(ds)
        spec = ds["spec"]["template"]["spec"]
        self.assertEqual(spec["containers"][0]["image"], f"hipstack-exporter:{VERSION}")
        self.assertEqual(ds["metadata"]["labels"]["app.kubernetes.io/version"], VERSION)
        self.assertEqual(spec["nodeSelector"], {"hipstack.io/gpu": "amd"})
        self.assertEqual(one(docs, "Namespace")["metadata"]["name"], ds["metadata"]["namespace"])

    def test_nvidia_overlay(self):
        docs = self.render(os.path.join(K8S, "nvidia"))
        self.assertValid(docs)
        self.check_fits_together(docs)
        spec = one(docs, "DaemonSet")["spec"]["template"]["spec"]
        self.check_security(one(docs, "DaemonSet"))
        self.assertEqual(spec["nodeSelector"], {"hipstack.io/gpu": "nvidia"})
        self.assertEqual(spec["runtimeClassName"], "nvidia")
        self.assertEqual(spec["containers"][0]["env"][0], {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"})

    def test_reader_agrees_with_kubectl(self):
        """The fallback reader builds what kubectl kustomize builds (but the ConfigMap's name hash):
        kubectl itself where it exists, which must also equal its recording, else the recording."""
        def normal(docs):
            text = re.sub(r"(hipstack-smid-config)-[a-z0-9]{10}\b", r"\1", json.dumps(docs))
            return sorted(json.loads(text), key=lambda d: (d["kind"], d["metadata"]["name"]))
        for name, sub in RECORDED_OVERLAYS.items():
            if KUBECTL:
                self.assertEqual(kubectl_kustomize(os.path.join(K8S, sub)), recorded_kustomize(name),
                                 f"kubectl kustomize differs from {RECORDED}/{name}.yaml: record it again")
        reference = kubectl_kustomize(K8S) if KUBECTL else recorded_kustomize("amd")
        self.assertEqual(normal(reference), normal(mini_kustomize(K8S)))

    def test_chart_and_manifests_agree(self):
        """The chart's defaults and the plain manifests run the same pod."""
        plain = one(mini_kustomize(K8S), "DaemonSet")["spec"]["template"]["spec"]
        chart = one(render_chart()[0], "DaemonSet")["spec"]["template"]["spec"]
        for key in ("nodeSelector", "tolerations", "terminationGracePeriodSeconds", "automountServiceAccountToken"):
            self.assertEqual(plain[key], chart[key], key)
        sc = dict(chart["securityContext"])
        self.assertEqual(sc.pop("supplementalGroups"), [])
        self.assertEqual(plain["securityContext"], sc)
        for key in ("image", "command", "args", "ports", "livenessProbe", "readinessProbe", "resources",
                    "securityContext", "volumeMounts"):
            self.assertEqual(plain["containers"][0][key], chart["containers"][0][key], key)
        plain_conf = parse_config(one(mini_kustomize(K8S), "ConfigMap")["data"]["hipstack-smid.conf"])
        chart_conf = parse_config(one(render_chart()[0], "ConfigMap")["data"]["hipstack-smid.conf"])
        self.assertEqual(plain_conf, chart_conf)


class Yamllint(unittest.TestCase):
    CONFIG = ("{extends: default, rules: {line-length: {max: 120}, document-start: disable, "
              "comments: {min-spaces-from-content: 1}, indentation: {indent-sequences: whatever}, "
              "truthy: {check-keys: false}}}")

    def lint(self, paths):
        self.assertTrue(shutil.which("yamllint"), "no yamllint (scripts/deps.sh test installs it)")
        proc = subprocess.run(["yamllint", "-s", "-d", self.CONFIG, *paths], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_sources(self):
        paths = []
        for folder, dirs, files in os.walk(K8S):
            dirs[:] = [d for d in dirs if d != "templates"]  # Go templates are not YAML
            paths += [os.path.join(folder, f) for f in files if f.endswith(".yaml")]
        paths += [os.path.join(HERE, "k8s_values", f) for f in os.listdir(os.path.join(HERE, "k8s_values"))]
        self.assertGreater(len(paths), 10)
        self.lint(paths)

    def test_rendered(self):
        paths = []
        for variant in VARIANTS:
            path = os.path.join(WORK, f"rendered-{variant}.yaml")
            with open(path, "w") as f:
                f.write(render_chart(variant_files(variant))[3])
            paths.append(path)
        self.lint(paths)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--project-version", required=True)
    parser.add_argument("--work-dir")
    parser.add_argument("--record-kustomize", action="store_true",
                        help="record kubectl kustomize's output in kustomize-recorded/ and exit")
    args, rest = parser.parse_known_args()
    setup_paths(args)
    if args.record_kustomize:
        return record_kustomize()
    build_renderer()
    print(f"kustomize: {'kubectl ' + KUBECTL if KUBECTL else 'no kubectl: the fallback reader'}", flush=True)
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
