# The packages a superbuild release must hold (sourced, not run; needs checks.sh first).
#   release_packages_check MANIFEST PACKAGES_DIR WHAT
#       Sets `names` (every package the release's stage/manifest.json names: the components' package
#       rules and the metapackages, sorted) and checks each is in PACKAGES_DIR as .deb and .rpm of
#       the manifest's version (release 1); passes or fails "all N packages of WHAT, .deb and .rpm".
release_packages_check() {
  local manifest=$1 dir=$2 what=$3 version p missing=()
  version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$manifest")
  mapfile -t names < <(python3 - "$manifest" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
names = {p["package"] for c in m["components"].values() for p in c["packages"]} | set(m.get("metapackages", {}))
print("\n".join(sorted(names)))
PY
)
  for p in "${names[@]}"; do
    compgen -G "$dir/${p}_$version-1_*.deb" >/dev/null || missing+=("$p.deb")
    compgen -G "$dir/$p-$version-1.*.rpm" >/dev/null || missing+=("$p.rpm")
  done
  if [ ${#names[@]} -gt 0 ] && [ ${#missing[@]} -eq 0 ]; then
    pass "all ${#names[@]} packages of $what, .deb and .rpm"
  else
    fail "packages of $what missing: ${missing[*]:-the manifest names none}"
  fi
}
