# Sourced by the guest build scripts: Debian's amd64 kernel, resolved from linux-image-amd64
# (not hard-coded), downloaded once and cached per package in $cache/$kernel_pkg/.
cache=${FLAP_SIM_CACHE:-$HOME/.cache/flapboard-sim}
mkdir -p "$cache"
# Each apt-cache reads apt's whole cache (~1.2 s of processor time), and a test run sources this
# for every guest it boots (process accounting of one: 56 runs, 70 s): the answer is kept in the
# cache under a name made of apt's package lists (their names, sizes and times), so that it is
# asked again after every `apt-get update` that changed them, and only then.
resolved=$cache/kernel-resolved-$(stat -c '%n %s %Y' /var/lib/apt/lists/*Packages* 2>/dev/null | md5sum | cut -c1-12)
if [ -s "$resolved" ]; then
  read -r kernel_pkg kernel_deb_version < "$resolved"
else
  kernel_pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  [ -n "$kernel_pkg" ] || { echo "cannot resolve linux-image-amd64 (apt-get update first)" >&2; exit 1; }
  kernel_deb_version=$(apt-cache show "$kernel_pkg" | awk '/^Version:/ {print $2; exit}')   # 6.1.192-2
  echo "$kernel_pkg $kernel_deb_version" > "$resolved.$$" && mv "$resolved.$$" "$resolved"
fi
kernel_version=${kernel_pkg#linux-image-}                      # 6.1.0-56-amd64
# The version of one of the kernel's sibling packages (linux-kbuild-6.1, linux-source-6.1) built
# from the same upstream release: the archive may hold them at another Debian revision than the
# image (6.1.192-3 beside the image's 6.1.192-2, seen on bookworm-security); any of them will do.
sibling_version() {
  apt-cache madison "$1" | awk -v up="${kernel_deb_version%-*}" '{ v = $3; sub(/-[^-]*$/, "", v); if (v == up) { print $3; exit } }'
}
kernel_cache=$cache/$kernel_pkg
mkdir -p "$kernel_cache"

# Runs a command holding the cache's lock (fd 8), so that tests running in parallel — and two
# clones sharing the cache — never fetch or build into it at once; what they write appears
# whole (written beside, then renamed).
with_cache_lock() {
  ( flock 8; "$@" ) 8>"$kernel_cache.lock"
}

# vmlinuz, vmlinux (what the guests boot: hardware/sim/extract-vmlinux) and configfs.ko (gpio-sim's
# configuration goes through configfs, a module here).
fetch_kernel() { with_cache_lock fetch_kernel_locked; }
fetch_kernel_locked() {
  [ -f "$kernel_cache/vmlinuz" ] && [ -f "$kernel_cache/configfs.ko" ] && [ -f "$kernel_cache/vmlinux" ] && return
  [ -z "${FLAP_PREPARED_ONLY:-}" ] || { echo "Debian's amd64 kernel for the guests is not made yet: run ./setup --test (or Tests/prepare kernel)" >&2; exit 3; }
  if [ ! -f "$kernel_cache/vmlinuz" ] || [ ! -f "$kernel_cache/configfs.ko" ]; then
    local tmp; tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download -qq -o Acquire::Retries=5 "$kernel_pkg" 2>&1 | grep -v unsandboxed || true)
    dpkg-deb -x "$tmp/${kernel_pkg}"_*.deb "$tmp/x"
    cp "$tmp"/x/boot/vmlinuz-* "$kernel_cache/vmlinuz.part" && mv "$kernel_cache/vmlinuz.part" "$kernel_cache/vmlinuz"
    cp "$tmp/x/lib/modules/$kernel_version/kernel/fs/configfs/configfs.ko" "$kernel_cache/configfs.ko.part"
    mv "$kernel_cache/configfs.ko.part" "$kernel_cache/configfs.ko"
    rm -rf "$tmp"
  fi
  "$(dirname "${BASH_SOURCE[0]}")/extract-vmlinux" "$kernel_cache/vmlinuz" "$kernel_cache/vmlinux"
}
