# The podman configuration the container tests run with (sourced, not run):
#   podman_test_conf DIR   writes DIR/containers.conf and exports CONTAINERS_CONF
# podman run here needs runc with the nofile/nproc limits at 1024 (the machine refuses raising them:
# ../shared/reference/MACHINE-NOTES.md), cgroupfs and file events (systemd is not PID 1).
podman_test_conf() {
  cat > "$1/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
  export CONTAINERS_CONF=$1/containers.conf
}
