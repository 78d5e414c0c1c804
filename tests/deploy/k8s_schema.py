"""Offline schema validation of Kubernetes manifests (tests/deploy/test_kubernetes.py).

Core kinds are checked against the model classes of Debian's python3-kubernetes (22.6, generated
from the Kubernetes 1.22 OpenAPI document): each class lists every field of its type with the
field's JSON name (attribute_map) and type (openapi_types), and its constructor refuses a missing
required field. Checked: unknown fields, types (strings, integers, booleans, lists, maps, nested
objects; int-or-string and quantity fields by name), required fields, nulls, and a few enums and
API-server rules written out below (names, label syntax, port names). Not checked: formats,
patterns and enums beyond those, defaulting, and anything the API server decides against the
cluster (quota, admission, immutable fields).

The ServiceMonitor (monitoring.coreos.com/v1) is checked against k8s_servicemonitor.schema.json,
a strict schema for the fields this project uses, written from the Prometheus Operator's API
documentation (no Debian package ships the operator's CRDs); its metadata and label selector are
checked as core types.
"""
import json
import os
import re

import jsonschema
import yaml
from kubernetes.client import models
from kubernetes.client.configuration import Configuration

_CONFIG = Configuration()
_CONFIG.client_side_validation = True

# (apiVersion, kind) -> model class. Only the kinds the project ships; anything else is an error.
KINDS = {
    ("v1", "Namespace"): models.V1Namespace,
    ("v1", "ServiceAccount"): models.V1ServiceAccount,
    ("v1", "ConfigMap"): models.V1ConfigMap,
    ("v1", "Secret"): models.V1Secret,
    ("v1", "Service"): models.V1Service,
    ("apps/v1", "DaemonSet"): models.V1DaemonSet,
    ("policy/v1", "PodDisruptionBudget"): models.V1PodDisruptionBudget,
}
SERVICE_MONITOR = ("monitoring.coreos.com/v1", "ServiceMonitor")

# Fields the generated client types loosely ('object' or 'str') but the API types precisely.
INT_OR_STRING = {
    ("V1HTTPGetAction", "port"), ("V1TCPSocketAction", "port"), ("V1ServicePort", "target_port"),
    ("V1NetworkPolicyPort", "port"), ("V1RollingUpdateDaemonSet", "max_unavailable"),
    ("V1RollingUpdateDaemonSet", "max_surge"), ("V1RollingUpdateDeployment", "max_unavailable"),
    ("V1RollingUpdateDeployment", "max_surge"), ("V1PodDisruptionBudgetSpec", "min_available"),
    ("V1PodDisruptionBudgetSpec", "max_unavailable"),
}
QUANTITY = {("V1ResourceRequirements", "limits"), ("V1ResourceRequirements", "requests"),
            ("V1EmptyDirVolumeSource", "size_limit")}
ENUMS = {
    ("V1Container", "image_pull_policy"): {"Always", "IfNotPresent", "Never"},
    ("V1ContainerPort", "protocol"): {"TCP", "UDP", "SCTP"},
    ("V1ServicePort", "protocol"): {"TCP", "UDP", "SCTP"},
    ("V1ServiceSpec", "type"): {"ClusterIP", "NodePort", "LoadBalancer", "ExternalName"},
    ("V1Toleration", "operator"): {"Exists", "Equal"},
    ("V1Toleration", "effect"): {"NoSchedule", "PreferNoSchedule", "NoExecute"},
    ("V1SeccompProfile", "type"): {"RuntimeDefault", "Localhost", "Unconfined"},
    ("V1HostPathVolumeSource", "type"): {"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File",
                                          "Socket", "CharDevice", "BlockDevice"},
    ("V1DaemonSetUpdateStrategy", "type"): {"RollingUpdate", "OnDelete"},
    ("V1HTTPGetAction", "scheme"): {"HTTP", "HTTPS"},
}

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
PORT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "k8s_servicemonitor.schema.json")) as f:
    _SM_VALIDATOR = jsonschema.Draft7Validator(json.load(f))


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing duplicate keys (the API server's strict decoding does too)."""


def _mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_documents(text):
    """Every non-empty document of a YAML stream (duplicate keys are an error)."""
    return [doc for doc in yaml.load_all(text, Loader=_StrictLoader) if doc is not None]


def _type_name(value):
    return type(value).__name__


def _check_type(type_name, value, path, owner, errors):
    if value is None:
        return  # null: the field is unset (required ones are caught by the constructor)
    if type_name.startswith("list["):
        if not isinstance(value, list):
            errors.append(f"{path}: expected a list, got {_type_name(value)}")
            return
        for i, item in enumerate(value):
            _check_type(type_name[5:-1], item, f"{path}[{i}]", owner, errors)
        return
    if type_name.startswith("dict(str, "):
        if not isinstance(value, dict):
            errors.append(f"{path}: expected a map, got {_type_name(value)}")
            return
        for key, item in value.items():
            if not isinstance(key, str):
                errors.append(f"{path}: map key {key!r} is not a string")
            _check_type(type_name[10:-1], item, f"{path}.{key}", owner, errors)
        return
    ok = {
        "str": lambda v: isinstance(v, str) or (owner in QUANTITY and isinstance(v, (int, float))
                                                and not isinstance(v, bool)),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool),
        "datetime": lambda v: isinstance(v, str),
        "date": lambda v: isinstance(v, str),
        "object": lambda v: (isinstance(v, (int, str)) and not isinstance(v, bool)) if owner in INT_OR_STRING else True,
    }.get(type_name)
    if ok is not None:
        if not ok(value):
            want = "an integer or a string" if owner in INT_OR_STRING else type_name
            errors.append(f"{path}: expected {want}, got {_type_name(value)} {value!r}")
        elif owner in ENUMS and value not in ENUMS[owner]:
            errors.append(f"{path}: {value!r} is not one of {sorted(ENUMS[owner])}")
        return
    cls = getattr(models, type_name, None)
    if cls is None:
        errors.append(f"{path}: no model for type {type_name}")
        return
    check_model(cls, value, path, errors)


def check_model(cls, data, path, errors):
    """Appends to errors every unknown field, wrong type and missing required field of data."""
    if not isinstance(data, dict):
        errors.append(f"{path}: expected an object ({cls.__name__}), got {_type_name(data)}")
        return
    by_json = {json_name: attr for attr, json_name in cls.attribute_map.items()}
    present = {}
    for key, value in data.items():
        attr = by_json.get(key)
        if attr is None:
            errors.append(f"{path}.{key}: unknown field (not in {cls.__name__})")
            continue
        _check_type(cls.openapi_types[attr], value, f"{path}.{key}", (cls.__name__, attr), errors)
        present[attr] = value
    try:
        cls(local_vars_configuration=_CONFIG, **present)
    except ValueError as e:  # "Invalid value for `containers`, must not be `None`"
        errors.append(f"{path}: {e} (a required field of {cls.__name__})")


def _check_metadata(doc, where, errors, namespaced):
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        errors.append(f"{where}: metadata.name is required")
        return
    if not isinstance(meta["name"], str) or not DNS_SUBDOMAIN.match(meta["name"]) or len(meta["name"]) > 253:
        errors.append(f"{where}: metadata.name {meta['name']!r} is not a DNS subdomain")
    if namespaced and meta.get("namespace") is not None and not DNS_LABEL.match(str(meta["namespace"])):
        errors.append(f"{where}: metadata.namespace {meta['namespace']!r} is not a DNS label")
    for field in ("labels",):
        for key, value in (meta.get(field) or {}).items():
            _check_label(str(key), value, f"{where}.metadata.{field}", errors)


def _check_label(key, value, where, errors):
    prefix, _, name = key.rpartition("/")
    if (prefix and not DNS_SUBDOMAIN.match(prefix)) or len(name) > 63 or not LABEL_NAME.match(name):
        errors.append(f"{where}: label key {key!r} is not valid")
    if not isinstance(value, str) or len(value) > 63 or not LABEL_VALUE.match(value):
        errors.append(f"{where}: label {key!r} value {value!r} is not a valid label value")


def _pod_rules(spec, where, errors):
    """API-server rules of a pod template that the types alone do not express."""
    if not isinstance(spec, dict):
        return
    volumes = {v.get("name") for v in spec.get("volumes") or [] if isinstance(v, dict)}
    for c in spec.get("containers") or []:
        if not isinstance(c, dict):
            continue
        name = c.get("name", "")
        if not isinstance(name, str) or not DNS_LABEL.match(name):
            errors.append(f"{where}: container name {name!r} is not a DNS label")
        ports = set()
        for p in c.get("ports") or []:
            if "name" in p:
                if not isinstance(p["name"], str) or len(p["name"]) > 15 or not PORT_NAME.match(p["name"]):
                    errors.append(f"{where}: port name {p['name']!r} is not an IANA service name (15 characters)")
                ports.add(p["name"])
        for m in c.get("volumeMounts") or []:
            if isinstance(m, dict) and m.get("name") not in volumes:
                errors.append(f"{where}: container {name} mounts volume {m.get('name')!r}, which the pod lacks")
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            port = ((c.get(probe) or {}).get("httpGet") or {}).get("port")
            if isinstance(port, str) and port not in ports:
                errors.append(f"{where}: {probe} names port {port!r}, which container {name} lacks")


def validate(doc, where="object"):
    """Every schema error of one manifest (an empty list: valid)."""
    errors = []
    if not isinstance(doc, dict):
        return [f"{where}: a manifest must be a map, got {_type_name(doc)}"]
    key = (doc.get("apiVersion"), doc.get("kind"))
    where = f"{where} ({key[1]} {((doc.get('metadata') or {}).get('name'))})"
    if key == SERVICE_MONITOR:
        for e in sorted(_SM_VALIDATOR.iter_errors(doc), key=lambda e: list(e.path)):
            path = ".".join(str(p) for p in e.path)
            errors.append(f"{where}: {path or '(top)'}: {e.message}")
        check_model(models.V1ObjectMeta, doc.get("metadata"), f"{where}.metadata", errors)
        selector = (doc.get("spec") or {}).get("selector") if isinstance(doc.get("spec"), dict) else None
        if selector is not None:
            check_model(models.V1LabelSelector, selector, f"{where}.spec.selector", errors)
        _check_metadata(doc, where, errors, namespaced=True)
        return errors
    cls = KINDS.get(key)
    if cls is None:
        return [f"{where}: unknown apiVersion/kind {key[0]}/{key[1]} (no schema)"]
    check_model(cls, doc, where, errors)
    _check_metadata(doc, where, errors, namespaced=key[1] != "Namespace")
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    strategy = spec.get("updateStrategy") if isinstance(spec.get("updateStrategy"), dict) else {}
    if key[1] == "DaemonSet" and strategy.get("type") == "OnDelete" and strategy.get("rollingUpdate") is not None:
        errors.append(f"{where}: spec.updateStrategy.rollingUpdate may not be set when type is OnDelete")
    template = spec.get("template") or {}
    if isinstance(template, dict) and template:
        for k, v in ((template.get("metadata") or {}).get("labels") or {}).items():
            _check_label(str(k), v, f"{where}.spec.template.metadata.labels", errors)
        _pod_rules(template.get("spec"), f"{where}.spec.template.spec", errors)
    return errors
