#!/usr/bin/env bash
#
# Put Debian's Open MPI (4.1, pml ucx) and the MPI test into a bundle, for a
# GPU node that has no package registry and no MPI:
#
#   BUNDLE/openmpi/         the installed packages openmpi-bin,
#                           openmpi-common, libopenmpi3 and libpmix2, each
#                           file at its Debian path below this one prefix
#                           (/usr/X is openmpi/X, /etc/openmpi is
#                           openmpi/etc/openmpi); no Java, Fortran or
#                           compiler wrappers
#   BUNDLE/openmpi/lib/deps the shared libraries those need that a bare
#                           node may lack (not the C runtime, not the
#                           driver's, not UCX: the bundle's own UCX is the
#                           one pml ucx must load)
#   BUNDLE/openmpi/env.sh   sourced before mpirun: OPAL_PREFIX,
#                           OPAL_SYSCONFDIR and PMIx's install folders,
#                           which relocate Open MPI, and PATH and
#                           LD_LIBRARY_PATH with BUNDLE's UCX first
#   BUNDLE/bin/mgi_mpi_test the test program (test/uct/mpi)
#   BUNDLE/run/mpi-gpu.sh   test/uct/mpi/run-gpu.sh
#
# BUNDLE is the folder contrib/bundle.sh made (its lib/ holds UCX with
# cuda_mgi), default `bundle` in this tree; or any folder, whose env.sh
# then looks for UCX in MGI_UCX (a UCX prefix) at run time.
#
# Usage: contrib/mpi-bundle.sh [BUNDLE]
#        (after contrib/setup.sh and make: Open MPI's Debian packages
#        installed, test/uct/mpi/mgi_mpi_test built)
#
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd -P)
out=${1:-$top/bundle}
ompi=$out/openmpi
packages="openmpi-bin openmpi-common libopenmpi3 libpmix2"

die() { printf '[mpi-bundle] error: %s\n' "$*" >&2; exit 1; }

for p in $packages; do
    dpkg -s "$p" >/dev/null 2>&1 ||
        die "Debian package $p is not installed (apt-get install openmpi-bin libopenmpi-dev)"
done
prog=$top/test/uct/mpi/mgi_mpi_test
[ -x "$prog" ] || die "no $prog: build this tree (make) with Open MPI installed"

# --- Open MPI's files, at their Debian paths below one prefix ---------------
rm -rf "$ompi"
mkdir -p "$ompi/lib/deps" "$out/bin" "$out/run"
# shellcheck disable=SC2086
dpkg -L $packages | while read -r f; do
    [ -f "$f" ] || [ -L "$f" ] || continue      # (folders come with files)
    case $f in
        /usr/share/doc/*|/usr/share/man/*|/usr/share/lintian/*) continue ;;
        *java*|*gfortran*|*mpifh*|*usempi*) continue ;;
        /usr/bin/mpi[cCf]*|/usr/bin/*cc|/usr/bin/*c++|/usr/bin/opal_wrapper) continue ;;
        /usr/*) dst=$ompi/${f#/usr/} ;;
        /etc/*) dst=$ompi/$f ;;
        *) continue ;;
    esac
    mkdir -p "$(dirname "$dst")"
    cp -P "$f" "$dst"
done
# mpirun and mpiexec are Debian's alternatives for orterun
ln -sf orterun "$ompi/bin/mpirun"
ln -sf orterun "$ompi/bin/mpiexec"
[ -x "$ompi/bin/orterun" ] || die "openmpi-bin holds no /usr/bin/orterun"

# where Debian's Open MPI and PMIx were installed (their prefix-relative
# paths follow OPAL_PREFIX and PMIX_PREFIX; the absolute ones need their own
# variables)
ompi_libdir=$(ompi_info --path libdir --parsable | sed -n 's/^path:libdir://p')
pmix_prefix=$(dirname "$(dirname "$(readlink -f \
                  /usr/lib/x86_64-linux-gnu/libpmix.so.2)")")
[ -n "$ompi_libdir" ] || die "ompi_info --path libdir printed nothing"
case $pmix_prefix in /usr/*) ;; *) die "PMIx is not under /usr: $pmix_prefix" ;; esac

# --- the libraries they need beyond the C runtime, the driver and UCX --------
keep_out='^(libc|libm|libdl|libpthread|librt|libresolv|libgcc_s|libstdc\+\+|ld-linux-x86-64|linux-vdso|libcuda|libnvidia-ml|libuc[mpst]|libucs_signal)\.'
for lib in $(find "$ompi" "$prog" -type f \( -name '*.so*' -o -perm -u+x \) \
                 -exec sh -c 'file -b "$1" | grep -q ELF && ldd "$1"' _ {} \; \
                 2>/dev/null | awk '$3 ~ /^\// {print $3}' | sort -u); do
    name=$(basename "$lib")
    [[ $name =~ $keep_out ]] && continue
    # (Open MPI's and PMIx's own libraries are there already)
    [ -n "$(find "$ompi" -name "$name" -print -quit)" ] && continue
    cp -L "$lib" "$ompi/lib/deps/$name"
done

# --- the environment that relocates it ---------------------------------------
version=$(dpkg-query -W -f '${Version}' libopenmpi3)
cat > "$ompi/env.sh" <<ENV
# Source before mpirun: Debian's Open MPI $version relocated here, and
# the bundle's UCX (MGI_UCX, or the bundle's lib/) first on the library
# path, so that pml ucx loads it.
_here=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd -P)
_ucx=\${MGI_UCX:-\$(dirname "\$_here")}
export OPAL_PREFIX=\$_here
export OPAL_SYSCONFDIR=\$_here/etc/openmpi
export PMIX_PREFIX=\$_here/${pmix_prefix#/usr/}
export PMIX_EXEC_PREFIX=\$PMIX_PREFIX
export PMIX_LIBDIR=\$PMIX_PREFIX/lib
export PMIX_PKGLIBDIR=\$PMIX_PREFIX/lib/pmix
export PMIX_DATAROOTDIR=\$PMIX_PREFIX/share
export PMIX_DATADIR=\$PMIX_PREFIX/share
export PMIX_PKGDATADIR=\$PMIX_PREFIX/share/pmix
export PMIX_SYSCONFDIR=\$PMIX_PREFIX/share
# (Debian's pmix-mca-params.conf names its plugins' folder in full)
export PMIX_MCA_mca_base_component_path=\$PMIX_PREFIX/lib/pmix
export PATH=\$_here/bin:\$PATH
export LD_LIBRARY_PATH=\$_ucx/lib:\$_here/${ompi_libdir#/usr/}:\$_here/lib/x86_64-linux-gnu:\$PMIX_PREFIX/lib:\$_here/lib/deps\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
unset _here _ucx
ENV

# --- the test program and its GPU script --------------------------------------
cp "$prog" "$out/bin/"
cp "$top/test/uct/mpi/run-gpu.sh" "$out/run/mpi-gpu.sh"

echo "[mpi-bundle] $ompi: Open MPI $version, $(du -sb "$ompi" |
    awk '{printf "%.1f MiB", $1 / 1048576}'), $(ls "$ompi/lib/deps" | wc -l) \
carried libraries; . $ompi/env.sh before mpirun"
