# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced by the embedding tests (run-embed.sh, ../gpugen_frames/
# run-frames.sh), which define fail().
#
# stage_install MESON BUILD WORK PREFIX LIBDIR PLUGIN_DIR PC...
#   installs BUILD into WORK/stage (meson install --destdir); sets stage,
#   libdir (absolute) and pcdir; points each staged PC file at the stage:
#   the .pc files say where the files will be once installed.

stage_install() {
	_meson=$1 _build=$2 _work=$3 _prefix=$4 _plugin_dir=$6
	libdir=$5
	shift 6
	stage=$_work/stage
	"$_meson" install -C "$_build" --no-rebuild --destdir "$stage" \
		> "$_work/install.log" 2>&1 ||
		{ cat "$_work/install.log"; fail "meson install"; }
	case $libdir in /*) ;; *) libdir=$_prefix/$libdir ;; esac
	pcdir=$stage$libdir/pkgconfig
	for _f in "$@"; do
		[ -f "$pcdir/$_f" ] || fail "$_f not installed in $pcdir"
		sed -i -e "s|^prefix=.*|prefix=$stage$_prefix|" \
			-e "s|^plugindir=.*|plugindir=$stage$_plugin_dir|" \
			"$pcdir/$_f"
	done
}
