# Sourced by the build scripts in hack/: one cache directory per machine,
# shared by every checkout, and a lock so that two concurrent `make test` runs
# neither build the same thing twice nor see half a binary.
cache="${KUBEHZ_CONTROLPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubehz-agent/controlplane}"

# reuse_or_lock LOCK: with the caller's built() true, prints $dir and ends the
# script; otherwise returns holding LOCK (a file in $cache), checking again
# once it holds it, since the build it waited for may have been this one.
reuse_or_lock() {
  if built; then
    echo "$dir"
    exit 0
  fi
  mkdir -p "$cache"
  exec 9>"$cache/$1"
  flock 9
  if built; then
    echo "$dir"
    exit 0
  fi
}
