"""A Gymnasium environment for any constrained system (design.md Sec. 4, Python API).

:class:`ConstrainedEnv` steps a :class:`pfaff.Simulator`: the action is the torque of
the actuated joints, or the ``ctrl`` of an MJCF's actuators within their ranges, the
observation the state ``(q, v)``, which stays on the
constraint manifold (the drift correction of every step, design.md Sec. 3). Importing
this module registers the task ``pfaff/FiveBar-v0`` (the five-bar loop of
:func:`pfaff.api.examples.five_bar` held at its start against gravity by its two
cranks). Needs the optional extra ``gym`` (``pip install pfaff[gym]``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from pfaff.api.examples import five_bar
from pfaff.api.simulator import Simulator
from pfaff.api.system import System
from pfaff.simulate import SimulationError

__all__ = ["ConstrainedEnv", "default_reward", "five_bar_env"]

#: the torque bound of a joint whose model gives none [N m or N]
DEFAULT_MAX_TORQUE = 1.0
#: the bound of every observation entry [rad, m, rad/s, m/s]: an episode whose state
#: leaves it terminates
OBS_BOUND = 1e6

Reward = Callable[[System, np.ndarray, np.ndarray, np.ndarray], float]


def default_reward(system: System, q: np.ndarray, v: np.ndarray, action: np.ndarray) -> float:
    """Stay near the start: ``-(|q (-) q0|^2 + 0.1 |v|^2 + 0.001 |action|^2)``, with
    ``q (-) q0 = system.difference(q0, q)`` the displacement on the configuration
    manifold [rad or m], ``v`` [rad/s or m/s], ``action`` the torques [N m or N]. At most
    0, reached at rest at the start with no torque."""
    dq = system.difference(system.q0, q)
    return -float(dq @ dq + 0.1 * (v @ v) + 1e-3 * (action @ action))


class ConstrainedEnv(gymnasium.Env):
    """A constrained system as a Gymnasium environment.

    Parameters
    ----------
    system : a :class:`pfaff.System` (``pfaff.load``).
    reward : ``reward(system, q, v, action) -> float`` after each step; default
        :func:`default_reward` (stay near the start).
    dt : the simulation step [s]; frame_skip : steps per action (default 10: the
        action is held for 10 ms, a 100 Hz controller).
    actuated : the names of the joints the action drives (one-dof joints only);
        default: every one-dof joint (hinges, slides), not free or ball joints.
    max_torque : the bound of each action entry [N m or N], a number or one per
        actuated joint; default: the model's effort limit where it has a finite one,
        else :data:`DEFAULT_MAX_TORQUE`. Actions are clipped to it.
    action : ``"torque"`` (the actuated joints' torques), ``"ctrl"`` (the system's
        actuators, ``Simulator.step(ctrl=...)``, each within its ``ctrlrange`` or
        +-:data:`DEFAULT_MAX_TORQUE` without one) or ``"auto"`` (default: ``"ctrl"``
        when the system has actuators, else ``"torque"``).
    max_steps : actions per episode before it is truncated (default 1000).
    terminate_distance : the episode terminates when ``max |q (-) q0|`` exceeds it
        [rad or m] (default None: never); it also terminates when a step fails (the
        message in ``info["error"]``).
    init_noise : the start is ``q0`` moved by ``init_noise * N(0, 1)`` along each
        tangent direction and ``v0 + init_noise * N(0, 1)``, then assembled onto the
        manifold (default 0.01); the generator is seeded by ``reset(seed=...)``.
    **options : :class:`~pfaff.simulate.SimOptions` fields for the Simulator.

    Spaces
    ------
    action: ``Box(-max_torque, max_torque, (n_actuated,), float64)``, or for ``"ctrl"``
    the actuators' ranges ``(nu,)``;
    observation: ``Box(-OBS_BOUND, OBS_BOUND, (nq + nv + na,), float64)``,
    ``concatenate([q, v, act])`` (``act``: the activations of the actuators with
    activation dynamics, ``sim.act``; an episode whose state leaves the box terminates).
    ``info``: ``t`` [s], ``constraint_violation`` (max ``|Phi|`` of the last step's start)
    and, after a failed step, ``error``.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        system: System,
        reward: Reward | None = None,
        *,
        dt: float = 1e-3,
        frame_skip: int = 10,
        actuated: Sequence[str] | None = None,
        max_torque: float | Sequence[float] | None = None,
        action: str = "auto",
        max_steps: int = 1000,
        terminate_distance: float | None = None,
        init_noise: float = 0.01,
        **options,
    ) -> None:
        super().__init__()
        self.system = system
        self.sim = Simulator(system, dt, record=False, **options)
        self.reward_fn = reward or default_reward
        self.frame_skip = _positive_int(frame_skip, "frame_skip")
        self.max_steps = _positive_int(max_steps, "max_steps")
        if terminate_distance is not None and not terminate_distance > 0:
            raise ValueError(f"terminate_distance must be > 0 or None, got {terminate_distance}")
        self.terminate_distance = terminate_distance
        if not (np.isfinite(init_noise) and init_noise >= 0):
            raise ValueError(f"init_noise must be a finite number >= 0, got {init_noise!r}")
        self.init_noise = float(init_noise)
        if action not in ("auto", "torque", "ctrl"):
            raise ValueError(f"action={action!r}; valid: 'auto', 'torque', 'ctrl'")
        if action == "ctrl" and not system.nu:
            raise ValueError("action='ctrl' needs actuators; this system has none: 'torque'")
        self.ctrl = action == "ctrl" or (action == "auto" and system.nu > 0)
        if self.ctrl:
            self.actuated = tuple(a.name for a in system.actuators)
            lo, hi = _ctrl_ranges(system)
            self.action_space = spaces.Box(lo, hi, dtype=np.float64)
        else:
            self.actuated, self._idx = _actuated(system, actuated)
            bound = _bounds(system, self._idx, max_torque)
            self.action_space = spaces.Box(-bound, bound, dtype=np.float64)
        n = system.nq + system.nv + len(self.sim.act)
        self.observation_space = spaces.Box(-OBS_BOUND, OBS_BOUND, (n,), dtype=np.float64)
        self._tau = np.zeros(system.nv)
        self._count = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode near the start (see ``init_noise``): ``(observation, info)``."""
        super().reset(seed=seed)
        sys_, rng = self.system, self.np_random
        q = sys_.integrate(sys_.q0, self.init_noise * rng.standard_normal(sys_.nv))
        v = sys_.v0 + self.init_noise * rng.standard_normal(sys_.nv)
        with warnings.catch_warnings():  # the noise is assembled away on purpose
            warnings.filterwarnings("ignore", "assembly moved the start", UserWarning)
            self.sim.reset(q, v)
        self._count = 0
        return self._obs(), self._info()

    def step(self, action):
        """Hold the torques ``action`` over ``frame_skip`` steps:
        ``(observation, reward, terminated, truncated, info)``."""
        a = np.asarray(action, dtype=float)
        if a.shape != self.action_space.shape or not np.isfinite(a).all():
            raise ValueError(
                f"action must be finite of shape {self.action_space.shape} (the "
                f"{'ctrl' if self.ctrl else 'torques'} of {', '.join(self.actuated)}), "
                f"got {np.asarray(action).tolist()}"
            )
        a = np.clip(a, self.action_space.low, self.action_space.high)
        error = None
        try:
            if self.ctrl:
                self.sim.step(ctrl=a, n=self.frame_skip)
            else:
                self._tau[self._idx] = a
                self.sim.step(self._tau, n=self.frame_skip)
        except SimulationError as exc:
            error = str(exc)
        self._count += 1
        q, v = self.sim.q, self.sim.v
        reward = float(self.reward_fn(self.system, q, v, a))
        obs = self._obs()
        terminated = error is not None or not bool(np.abs(obs).max() <= OBS_BOUND)
        if self.terminate_distance is not None:
            dq = self.system.difference(self.system.q0, q)
            terminated = terminated or bool(np.abs(dq).max() > self.terminate_distance)
        truncated = not terminated and self._count >= self.max_steps
        info = self._info()
        if error is not None:
            info["error"] = error
        return np.clip(obs, -OBS_BOUND, OBS_BOUND), reward, terminated, truncated, info

    def _obs(self) -> np.ndarray:
        return np.concatenate([self.sim.q, self.sim.v, self.sim.act])

    def _info(self) -> dict:
        last = self.sim.last
        phi = 0.0 if last is None else float(np.max(np.abs(last.phi), initial=0.0))
        return {"t": self.sim.t, "constraint_violation": phi}


def five_bar_env(**kwargs) -> ConstrainedEnv:
    """The task ``pfaff/FiveBar-v0``: hold the five-bar loop (:func:`five_bar`) at its
    start against gravity with its two cranks ``left`` and ``right`` (at most 5 N m
    each), 10 ms per action, 1000 actions, terminated when a joint moves more than
    1 rad from the start. ``kwargs`` override these."""
    kw = dict(actuated=("left", "right"), max_torque=5.0, terminate_distance=1.0)
    kw.update(kwargs)
    return ConstrainedEnv(five_bar(), **kw)


def _positive_int(x, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {x!r}")
    return int(x)


def _actuated(system: System, names: Sequence[str] | None) -> tuple[tuple[str, ...], np.ndarray]:
    """The actuated joints' names and their velocity indices."""
    model = system.mechanism.model
    one_dof = {
        model.names[j]: int(model.joints[j].idx_v)
        for j in range(1, model.njoints)
        if model.joints[j].nv == 1
    }
    if names is None:
        names = tuple(one_dof)
    names = tuple(names)
    bad = [n for n in names if n not in one_dof]
    if bad or not names:
        raise ValueError(
            f"actuated: {bad or 'none'} are not one-dof joints of the model; "
            f"valid: {', '.join(one_dof) or 'none'}"
        )
    return names, np.array([one_dof[n] for n in names], dtype=int)


def _ctrl_ranges(system: System) -> tuple[np.ndarray, np.ndarray]:
    """Each actuator's ctrlrange, +-DEFAULT_MAX_TORQUE where it has none."""
    r = [a.ctrlrange or (-DEFAULT_MAX_TORQUE, DEFAULT_MAX_TORQUE) for a in system.actuators]
    lo, hi = np.array(r, dtype=float).T
    return lo, hi


def _bounds(system: System, idx: np.ndarray, max_torque) -> np.ndarray:
    if max_torque is None:
        eff = np.asarray(system.mechanism.model.effortLimit, dtype=float)[idx]
        ok = np.isfinite(eff) & (eff > 0) & (eff < 1e300)
        return np.where(ok, eff, DEFAULT_MAX_TORQUE)
    b = np.broadcast_to(np.asarray(max_torque, dtype=float), idx.shape).copy()
    if not (np.isfinite(b).all() and (b > 0).all()):
        raise ValueError(f"max_torque must be finite and > 0 per joint, got {max_torque!r}")
    return b


if "pfaff/FiveBar-v0" not in gymnasium.registry:
    gymnasium.register(id="pfaff/FiveBar-v0", entry_point="pfaff.gym:five_bar_env")
