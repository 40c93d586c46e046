"""The standalone page of a 3D scene: meshcat's viewer, the recorded commands, a loader.

The commands come from :func:`pfaff.report.scene3d.scene_html` (length-prefixed
msgpack, optionally gzip-compressed); the loader decodes them in the browser
(``DecompressionStream``) and replays them into meshcat's viewer in order.
"""

from __future__ import annotations

import base64
import gzip
import html
import math
from collections.abc import Sequence
from importlib import resources


def scene_page(
    blob: bytes, title: str, compress: bool, target: Sequence[float] | None = None
) -> str:
    """The HTML page: meshcat's viewer script, the base64 scene data and the loader.

    ``target`` is the point the camera's orbit controls turn about, in the
    viewer's coordinates (three.js, y up); default the origin.
    """
    aim = [0.0, 0.0, 0.0] if target is None else [float(x) for x in target]
    if len(aim) != 3 or not all(math.isfinite(x) for x in aim):
        raise ValueError(f"target must be 3 finite numbers; got {target!r}")
    js = (resources.files("meshcat") / "viewer" / "dist" / "main.min.js").read_text("utf-8")
    b64 = base64.b64encode(gzip.compress(blob, 6, mtime=0) if compress else blob).decode()
    return TEMPLATE.format(
        title=html.escape(title or "pfaff 3D scene"),
        heading=html.escape(title),
        viewer_js=js.replace("</script", "<\\/script"),
        encoding="gzip" if compress else "none",
        n=len(blob),
        target=",".join(f"{x:.6g}" for x in aim),
        data="\n".join(b64[i : i + 4096] for i in range(0, len(b64), 4096)),
        loader=LOADER,
    )


# Decodes the scene data and replays its length-prefixed msgpack commands, in order.
LOADER = """(function () {
  var status = document.getElementById("pfaff-status");
  function fail(e) { status.textContent = "3D scene failed to load: " + e; console.error(e); }
  try {
    var viewer = new MeshCat.Viewer(document.getElementById("meshcat-pane"));
    var el = document.getElementById("pfaff-scene");
    var raw = atob(el.textContent.replace(/\\s+/g, ""));
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    var ready = Promise.resolve(bytes);
    if (el.getAttribute("data-encoding") === "gzip") {
      if (typeof DecompressionStream === "undefined")
        throw new Error("this browser has no DecompressionStream; rebuild with compress=False");
      var s = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      ready = new Response(s).arrayBuffer().then(function (b) { return new Uint8Array(b); });
    }
    ready.then(function (buf) {
      var view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength), off = 0, n = 0;
      for (; off < buf.length; n++) {
        var len = view.getUint32(off);
        viewer.handle_command_bytearray(buf.slice(off + 4, off + 4 + len));
        off += 4 + len;
      }
      var aim = String(el.getAttribute("data-target") || "").split(",").map(Number);
      if (viewer.controls && aim.length === 3 && aim.every(isFinite)) {
        viewer.controls.target.set(aim[0], aim[1], aim[2]);  // orbit about the scene's middle
        viewer.controls.update();
        viewer.set_dirty();
      }
      status.textContent = "";
      window.pfaffSceneCommands = n;
    }).catch(fail);
  } catch (e) { fail(e); }
})();"""

TEMPLATE = """<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ margin: 0; }}
#meshcat-pane {{ width: 100vw; height: 100vh; overflow: hidden; }}
.pfaff-label {{ position: absolute; left: 10px; font: 15px sans-serif; color: #fff;
  text-shadow: 0 0 3px #000; pointer-events: none; }}
</style></head>
<body>
<div id="meshcat-pane"></div>
<div id="pfaff-title" class="pfaff-label" style="top: 8px">{heading}</div>
<div id="pfaff-status" class="pfaff-label" style="top: 30px">Loading 3D scene&hellip;</div>
<script>
{viewer_js}
</script>
<script id="pfaff-scene" type="application/octet-stream" data-encoding="{encoding}" \
data-bytes="{n}" data-target="{target}">
{data}
</script>
<script>
{loader}</script>
</body>
</html>
"""
