"""Small systems that ship with pfaff, for the guides' examples and the registered
Gymnasium task (:mod:`pfaff.gym`): no file of the source tree needed."""

from __future__ import annotations

import tempfile
from pathlib import Path

from pfaff.api.system import System, load

__all__ = ["FIVE_BAR_MJCF", "five_bar"]

#: a planar five-bar (two degrees of freedom) in the x-z plane: two cranks on ground
#: hinges 0.3 m apart, each carrying a distal link; the distal tips meet (a site-to-site
#: connect: 3 rows of rank 2). The same model as tests/models/five_bar.xml, its geoms
#: out of collision (contype and conaffinity 0): the links cross in one plane, and the
#: distal ones touch where the loop closes, which MuJoCo would resolve as contacts. Its
#: keyframe is the loop closed (qpos0 is 0.19 off the loop: assembly would move it).
FIVE_BAR_MJCF = """<mujoco model="five-bar">
  <default>
    <geom type="capsule" size="0.01" density="2700" contype="0" conaffinity="0"/>
    <joint type="hinge" axis="0 1 0"/>
  </default>
  <worldbody>
    <body name="left" euler="0 -100 0">
      <joint name="left"/>
      <geom fromto="0 0 0 0.25 0 0"/>
      <body name="left_distal" pos="0.25 0 0" euler="0 60 0">
        <joint name="left_distal"/>
        <geom fromto="0 0 0 0.35 0 0"/>
        <site name="left_tip" pos="0.35 0 0"/>
      </body>
    </body>
    <body name="right" pos="0.3 0 0" euler="0 -80 0">
      <joint name="right"/>
      <geom fromto="0 0 0 0.25 0 0"/>
      <body name="right_distal" pos="0.25 0 0" euler="0 -60 0">
        <joint name="right_distal"/>
        <geom fromto="0 0 0 0.35 0 0"/>
        <site name="right_tip" pos="0.35 0 0"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <connect name="tips" site1="left_tip" site2="right_tip"/>
  </equality>
  <keyframe>
    <key name="closed" qpos="-0.12275532446975128 -0.05826294650674262
                             0.12275532446975095 0.058262946506742144"/>
  </keyframe>
</mujoco>
"""


def five_bar() -> System:
    """The five-bar loop of :data:`FIVE_BAR_MJCF` as a :class:`~pfaff.api.System`
    (nq = nv = 4, 3 constraint rows of rank 2: 2 degrees of freedom), under gravity."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "five_bar.xml"
        path.write_text(FIVE_BAR_MJCF, encoding="utf-8")
        system = load(path)
    system.source = "five_bar (pfaff.api.examples)"
    return system
