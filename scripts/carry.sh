# Sourced by the scripts that prepare a folder to carry to the GPU machine
# (bench/*/prepare.sh, test/gpu/prepare-*.sh). That machine has no LLVM and
# may lack oneTBB: a carry holds the runtime and the libtbb it links.

# carry_runtime LIB DEST: copies the runtime LIB (libcleave_rt.so) and the
# libtbb.so.12 it links into the folder DEST.
carry_runtime() {
  local lib=$1 dest=$2 tbb
  cp -L "$lib" "$dest/libcleave_rt.so"
  tbb=$(ldd "$dest/libcleave_rt.so" | awk '/libtbb\.so/ {print $3; exit}')
  [ -n "$tbb" ] || { echo "${0##*/}: libtbb not found (ldd $lib)" >&2; return 1; }
  cp -L "$tbb" "$dest/libtbb.so.12"
}

# carry_commit ROOT FILE: writes ROOT's commit to FILE, and a second line
# `dirty` when its working tree has uncommitted changes.
carry_commit() {
  local root=$1 file=$2
  { git -C "$root" rev-parse HEAD
    git -C "$root" --no-optional-locks status --porcelain | grep -q . && echo dirty || true; } > "$file"
}

# carry_start ROOT CARRY: sets cleave (CLEAVE, else ROOT's build/bin/cleave),
# nvcc (NVCC, else /usr/local/cuda/bin/nvcc) and lib (the runtime beside
# cleave), fails with a hint when one is missing, and empties CARRY into
# CARRY/bin and CARRY/lib.
carry_start() {
  local root=$1 carry=$2
  cleave=${CLEAVE:-$root/build/bin/cleave}
  nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
  [ -x "$cleave" ] || { echo "prepare: no $cleave (ninja -C build)" >&2; return 1; }
  [ -x "$nvcc" ] || { echo "prepare: no nvcc at $nvcc (set NVCC)" >&2; return 1; }
  lib=$(dirname "$cleave")/../lib/libcleave_rt.so
  [ -e "$lib" ] || { echo "prepare: no $lib (ninja -C build)" >&2; return 1; }
  rm -rf "$carry"
  mkdir -p "$carry/bin" "$carry/lib"
}
