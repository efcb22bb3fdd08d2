"""Shell scripts that make TheRock-layout toolkits from the sandbox's ROCm, for the bazel tier.

Each runs in the sandbox as `sh SCRIPT TARBALL` and writes a .tar.gz there. Here, not in a
test module, because several test modules build with them (test_therock_release,
test_host_mode, test_hermetic, test_full_mode, test_rbe_wheels, test_rocm_configure).
"""

from __future__ import annotations

# A ROCm 7.2.4 TheRock toolkit of HIP alone (test_rocm_configure, test_full_mode: the
# repository rule's view of it): built from the sandbox's own ROCm files (the real
# libamdhip64 and headers), with a manifest and dist_info.json written here, and
# lib/llvm/bin/clang (and clang-offload-bundler) two-line scripts that run the sandbox's, to keep the tarball small.
MAKE_SMALL_TARBALL = r"""
set -e
d=$(mktemp -d); r=$d/therock
mkdir -p $r/include $r/lib/llvm/bin $r/lib/llvm/amdgcn/bitcode $r/lib/rocm_sysdeps/lib $r/share/therock $r/bin
cp -a /usr/include/hip /usr/include/hsa /usr/include/rocm-core $r/include/
rm -f $r/include/hsa/hsa
cp -a /usr/lib/x86_64-linux-gnu/libamdhip64.so* $r/lib/
cp /usr/lib/llvm-22/lib/clang/22/amdgcn/bitcode/ocml.bc $r/lib/llvm/amdgcn/bitcode/
printf '#!/bin/sh\nexec /usr/lib/llvm-22/bin/clang "$@"\n' > $r/lib/llvm/bin/clang; chmod +x $r/lib/llvm/bin/clang
printf '#!/bin/sh\nexec /usr/lib/llvm-22/bin/clang-offload-bundler "$@"\n' \
  > $r/lib/llvm/bin/clang-offload-bundler; chmod +x $r/lib/llvm/bin/clang-offload-bundler
echo '{"the_rock_commit": "test-fixture", "rocm_version": "7.2.4", "rocm_package_version": "7.2.4a20261122"}' > $r/share/therock/therock_manifest.json
echo '{"dist_amdgpu_targets": "gfx942;gfx950"}' > $r/share/therock/dist_info.json
tar -C $d -czf "$1" therock
rm -rf $d
"""  # noqa: E501 (the manifest, one line of JSON)

# The release MAKE_TARBALL's toolkit says it is (its manifest's rocm_package_version).
VERSION = "7.10.0a20251120"

# A TheRock-layout toolkit from the sandbox's ROCm: the real HIP headers, libamdhip64 and
# device bitcode; lib/llvm/bin/clang runs the sandbox's clang (keeps the tarball small).
# JAX's modules also compile against hipBLAS, hipSOLVER, rocSOLVER, hipSPARSE and MIOpen:
# their real headers, and for linking, interface stubs of their libraries (the real sonames
# and exported symbols, empty bodies; rocSOLVER alone is 700 MB). Nothing here runs them.
# Shell pieces of a TheRock-layout toolkit made from the root's ROCm ($r: the toolkit, $d: scratch).
# stub LIB: an interface stub of /usr/lib/.../libLIB.so in $r/lib: same soname, same exported names.
STUB_LIBRARY = r"""
stub() {
  real=$(readlink -f /usr/lib/x86_64-linux-gnu/lib$1.so)
  soname=$(objdump -p "$real" | awk '/SONAME/ {print $2}')
  nm -D --defined-only --format=posix "$real" | awk '{sub(/@.*/, "", $1)} $1 ~ /^[A-Za-z_][A-Za-z0-9_]*$/ {
      if ($2 ~ /^[TtWi]$/) print "void " $1 "(void) {}"; else print "char " $1 "[1];" }' | sort -u > $d/$1.c
  gcc -shared -fPIC -w -o $r/lib/$soname -Wl,-soname,$soname $d/$1.c
  ln -s $soname $r/lib/lib$1.so
}
"""
# The HIP runtime, its version file and the device compiler (ROCm's clang and bitcode).
# clang reads the HIP version from share/hip/version; without it it assumes an old HIP, whose
# headers then lack device min/max (as a real TheRock toolkit, which ships it, would not).
HIP_AND_COMPILER = r"""
cp -a /usr/lib/x86_64-linux-gnu/libamdhip64.so* $r/lib/
mkdir -p $r/share/hip && cp /usr/share/hip/version $r/share/hip/
cp -a /usr/lib/llvm-22/lib/clang/22/amdgcn/bitcode $r/lib/llvm/amdgcn/
printf '#!/bin/sh\nexec /usr/lib/llvm-22/bin/clang "$@"\n' > $r/lib/llvm/bin/clang; chmod +x $r/lib/llvm/bin/clang
printf '#!/bin/sh\nexec /usr/lib/llvm-22/bin/clang-offload-bundler "$@"\n' \
  > $r/lib/llvm/bin/clang-offload-bundler; chmod +x $r/lib/llvm/bin/clang-offload-bundler
"""
TOOLKIT = r"""
set -e
d=$(mktemp -d); r=$d/install
mkdir -p $r/include $r/lib/llvm/bin $r/lib/llvm/amdgcn $r/lib/rocm_sysdeps/lib $r/share/therock $r/bin
cp -a /usr/include/hip /usr/include/hsa /usr/include/rocm-core $r/include/
cp -a /usr/include/hipblas /usr/include/hipblas-common /usr/include/hipsolver /usr/include/hipsparse \
      /usr/include/miopen /usr/include/rocsolver /usr/include/rocblas $r/include/
rm -f $r/include/hsa/hsa
""" + HIP_AND_COMPILER + STUB_LIBRARY + r"""
for lib in hipblas hipsolver hipsparse MIOpen rocsolver; do stub $lib; done
"""
PACK = r"""
tar -C $d -czf "$1" install
rm -rf $d
"""
MAKE_TARBALL = TOOLKIT + r"""
echo '{"the_rock_commit": "test-fixture", "rocm_version": "7.10.0", "rocm_package_version": "%s"}' > $r/share/therock/therock_manifest.json
""" % VERSION + PACK

# A multi-arch TheRock tarball (TheRock's RELEASES.md, "Installing multi-arch tarballs"), `sh
# SCRIPT TARBALL "TARGETS"`: the same toolkit with hipFFT, hipRAND, rocRAND and RCCL too, a ROCm 10 nightly-BKC release by its manifest
# (which says its artifacts are kernel-pack split), with .kpack/ beside bin/ include/ lib/: a
# manifest per artifact and a pack per target of TARGETS, opaque bytes standing in for
# TheRock's packs (nothing here runs them), and their loader librocm_kpack, a stub of that
# name. No librocm_smi64, as TheRock ships none after its #6852.
MULTIARCH_VERSION = "10.1.0a20260811+bkc.20260814"
MAKE_MULTIARCH_TARBALL = TOOLKIT + r"""
# The libraries whose kernel packs the fft, rand and rccl artifacts hold, as headers and stubs.
cp -a /usr/include/hipfft /usr/include/hiprand /usr/include/rocrand /usr/include/rccl $r/include/
for lib in hipfft hiprand rocrand rccl; do stub $lib; done
cat > $r/share/therock/therock_manifest.json <<EOF
{"the_rock_commit": "test-fixture", "rocm_version": "10.1.0", "rocm_package_version": "%s",
 "flags": {"KPACK_SPLIT_ARTIFACTS": true}}
EOF
mkdir -p $r/.kpack
for artifact in blas fft rand rccl; do
  echo "kpack manifest of $artifact" > $r/.kpack/${artifact}_lib.kpm
  for target in $2; do echo "kernels of $artifact for $target" > $r/.kpack/${artifact}_lib_$target.kpack; done
done
echo 'void kpack_open(void) {}' > $d/kpack.c
gcc -shared -fPIC -o $r/lib/librocm_kpack.so.1 -Wl,-soname,librocm_kpack.so.1 $d/kpack.c
ln -s librocm_kpack.so.1 $r/lib/librocm_kpack.so
""" % MULTIARCH_VERSION + PACK

