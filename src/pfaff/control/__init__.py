"""Controllers ``tau = controller(t, snapshot)`` of constrained systems (Aghili Sec. 7)."""

from pfaff.control.controllers import (
    ComputedTorque,
    ForceReference,
    ProjectedController,
    gain,
    resolve_joints,
)
from pfaff.control.laws import (
    TaskError,
    actuator_limit_weight,
    characteristic_length_weight,
    force_control_torque,
    hybrid_torque,
    min_norm_torque,
    passive_joint_torque,
    pidc_torque,
    task_acceleration,
)
from pfaff.control.references import Reference
from pfaff.control.tasks import FrameTask, JointTask, StackedTask, Task

__all__ = [
    "ComputedTorque",
    "ForceReference",
    "FrameTask",
    "JointTask",
    "ProjectedController",
    "Reference",
    "StackedTask",
    "Task",
    "TaskError",
    "actuator_limit_weight",
    "characteristic_length_weight",
    "force_control_torque",
    "gain",
    "hybrid_torque",
    "min_norm_torque",
    "passive_joint_torque",
    "pidc_torque",
    "resolve_joints",
    "task_acceleration",
]
