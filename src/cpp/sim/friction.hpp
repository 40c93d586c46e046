// Coulomb friction at the held contact points of a limited run (limits.cpp, contact.hpp):
// a held point with friction (its pair's mu > 0) either sticks (two more PointOnPlane
// rows at its body point, planes through its anchor across the tangents t1, t2: their
// multipliers the tangential force; a sphere or a capsule rolls without slipping, two
// Pfaffian RollingPoint rows at its contact point) or slips (Coulomb's force -mu f_n s
// on its normal row, the dynamics of algorithms/friction.cpp; a round geom's acts at
// its contact point, radius below its held core, whose slip it opposes). The transitions are events of the run:
// "slip" where a stuck point's force leaves the cone (at a sample, as a release is
// read), "stick" where a slipping point's slip velocity turns against its direction (a
// located root) and the force it then needs lies inside the cone.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "model/core_types.hpp"
#include "sim/contact.hpp"
#include "sim/limits.hpp"

namespace pfaff
{
  class System;
  struct Model;
  struct Data;

  /// the frames (and rows) of the System's Model at (q, v) into its Data
  void frames_at(System & s, const VecX & q, const VecX & v);
  /// the first of the two tangential rows of held entry c (a stuck contact point with
  /// friction) among the active rows, else -1
  int stick_row(const Model & mo, const Held & held, std::size_t c);
  /// held entry (i, j) is a contact point with friction that slips (not stuck)
  bool slipping(const Model & mo, int i, int j);
  /// the tangential velocity [m/s] of contact spec j's body point at v (d's frames; a
  /// sphere's or capsule's: its material point at the contact, its slip)
  Vec3 slip_velocity(const Model & mo, const Data & d, const VecX & v, int j);
  /// the rows of that tangential velocity (d's frames), its normal n (world) out
  Matrix3x slip_rows(const Model & mo, const Data & d, int j, Vec3 & n);
  /// a point's velocity rows Jp less their part along the unit normal n
  Matrix3x tangential_rows(const Matrix3x & Jp, const Vec3 & n);
  /// the friction force [N] on the moving geom of held entry c (a contact point) at the
  /// multipliers lam of d's state with velocity v: a stuck point's rows, a slipping
  /// point's -mu f_n s; 0 without friction
  Vec3 tangent_force(
    const Model & mo, const Data & d, const VecX & v, const Held & held, std::size_t c,
    const VecX & lam);
  /// where friction acts on the moving geom: a round geom's contact point (radius below
  /// its core along the normal), a vertex's own point
  Vec3 friction_point(const ContactPoint & p);

  /// the friction mode of a point held at an impact with velocity v after it (d's frames
  /// at the impact's state): stuck where its tangential speed is at most its pair's rest
  /// speed (the start's projection then stops it), else slipping along it
  ContactMode landing_mode(const Model & mo, const Data & d, const VecX & v, const ContactPoint & p);

  /// The slip directions of one run's slipping points at the last sample (by contact
  /// spec; zero: none yet): a slip velocity that turns against it is a located event
  class SlipWatch
  {
  public:
    /// the slipping specs whose slip velocity at (q, v) turned against their direction
    /// (by more than round-off); with `update` the others' directions move to (q, v)'s
    std::vector<int> turned(System & s, const Held & held, const VecX & q, const VecX & v,
                            bool update);
    /// the first root in (0, h] of spec j's slip velocity along its direction over steps
    /// of length x (step(x, q, v), false where it fails: NaN returned); h itself where
    /// it has not turned by then
    double root(System & s, int j, const std::function<bool(double, VecX &, VecX &)> & step,
                double h, double event_tol);
    void forget(int j);
    /// every direction forgotten: after an impact the velocity jumped, so a slip
    /// velocity against the last sample's direction is the impulse's, not a stop (the
    /// next sample takes the directions up again)
    void restart();
    /// spec j's slip stopped at t: whether its last stop was less than dt before (a slip
    /// that stops twice within a step chatters)
    bool again(int j, double t, double dt);
    /// spec j held stuck before `until` (leave_cone does not slip it)
    void hold(int j, double until);
    /// spec j started to slip at t (leave_cone)
    void slipped(int j, double t);
    /// spec j's slip, started less than dt before t, stopped and stuck at t: it is held
    /// stuck until t + dt (a stick-slip chatter's Zeno rule, as the guard's for stops)
    void stuck(int j, double t, double dt);
    /// spec j is held stuck at t (leave_cone does not slip it)
    bool holds(int j, double t) const;
    /// the time spec j's last slip started (-inf: none)
    double started(int j) const;
    /// the watch of these specs, spec specs[c]'s as c's (a run's held contact points in
    /// held order: the specs the next call's compact_contacts numbers so)
    SlipWatch ordered(const std::vector<int> & specs) const;

  private:
    std::vector<Vec3> dir_;
    // per spec: the last stop's time, the last slip's start, held stuck until
    std::vector<double> last_, start_, hold_;
    void fit(std::size_t n);
  };

  /// the event a slip leave_cone starts gives (kind 3, at zero slip speed)
  inline bool cone_slip(const LimitEventRec & e) { return e.kind == 3 && e.v_pre == 0.0; }

  /// What a run leaves to a call that goes on from its end (a Simulator stepped call by
  /// call): the event guard's clocks (the stops pinned, the releases, the last step's
  /// events) and the slip watch's directions and holds, the watch's by held contact point
  /// in held order, and the slips its last instant started (leave_cone's events), which
  /// the next call reports (at its start it may stop them at once: then neither is an
  /// event). A call taking it up at its end time runs as the one call through both
  /// would (run_limited's memory)
  struct RunMemory
  {
    double t_end = std::numeric_limits<double>::quiet_NaN();
    std::optional<EventGuard> guard; // its size: the run's limits and pairs
    SlipWatch slips;
    std::vector<LimitEventRec> pending; // the slips started at t_end
  };
  /// memory's guard, watch and pending slips into guard, slips and events where it goes
  /// on at t0: the end of a run of U limits and pairs, to 1e-9 dt (else left as new)
  void take_up(const RunMemory * memory, double t0, double dt, int U, EventGuard & guard,
               SlipWatch & slips, std::vector<LimitEventRec> & events);
  /// a run's clocks at its end t into memory, where there is one (L: its limits, the
  /// watch in held order), and the slips started at t moved from events into it
  void remember(RunMemory * memory, double t, const Held & held, int L, const EventGuard & guard,
                const SlipWatch & slips, std::vector<LimitEventRec> & events);

  /// at a sample (d's least-norm multipliers lam_ of the System's evaluated state, a
  /// contact held): where a held row pulls or a stuck point's friction leaves its cone by
  /// more than tol, the multipliers of the same motion nearest to them that push inside
  /// every cone into d.lam_ where such exist (true; held_forces.cpp), else d.lam_ kept
  bool push_held(System & s, const Held & held, double tol);
  /// at a sample (d's terms of the System's state) where a held row pulls under every
  /// split: the held entries that let go together, the contact problem of the held set
  /// at the acceleration level (algorithms/unilateral_forces.cpp: each held row pushes
  /// and stays, or its multiplier is zero and it separates); empty where a point slips
  /// (the problem is then non-symmetric), no contact is held, or ProxQP does not solve it
  std::vector<std::size_t> separating(System & s, const Held & held, double tol);
  /// at a sample (d's multipliers of the System's state): the stuck points whose
  /// tangential force leaves the cone by more than tol slip along the slip they impend
  /// (those watch holds stuck excepted), one "slip" event per pair into events; whether
  /// any did. A point whose slip would at once be in Painleve's case stays stuck, held
  /// to the step's end (no event); stale: d's terms are no longer the sample's (a slip
  /// was tried)
  bool leave_cone(System & s, const Held & held, double tol, double t, EventGuard & guard,
                  std::vector<LimitEventRec> & events, SlipWatch & watch, bool & stale);
  /// contact spec j's slip stopped at the System's state: it sticks where the force it
  /// then needs lies inside the cone (event "stick"), else slips on (event "slip") along
  /// the direction its slip starts in (slip_onset), else (none found, or a second stop
  /// within a step) it is held stuck to the step's end (watch.hold)
  void stop_slip(System & s, const Held & held, int j, double tol, double t, EventGuard & guard,
                 std::vector<LimitEventRec> & events, SlipWatch & watch);
  /// after an impact (a contact's or a limit's impulse) at the System's state: each
  /// slipping point the impulse stopped (its slip speed at most its pair's rest speed)
  /// is a slip stopped at t (stop_slip, once per pair): it sticks, or slips on
  void stopped_by_impact(System & s, const Held & held, double tol, double t,
                         EventGuard & guard, std::vector<LimitEventRec> & events,
                         SlipWatch & watch);
  /// the held contact specs whose slipping row is in Painleve's case at d's state (accel
  /// evaluated): with every friction on its multiplier pulls (Data::coulomb_lam_), the
  /// dynamics solved without its friction push (Data::slip_lam_), both by more than tol:
  /// Coulomb has no consistent force there
  std::vector<int> painleve(const Model & mo, const Data & d, const Held & held, double tol);
  /// painleve at (q, v) (the System's terms and acceleration evaluated there)
  std::vector<int> painleve_at(System & s, const Held & held, const VecX & q, const VecX & v,
                               double tol);
  /// the first root in (0, h] of slipping spec j's multiplier with every friction on over
  /// steps of length x (step(x, q, v), false where it fails: read as pulling), where it
  /// turns to pull; h itself where it has not by then (NaN: j does not slip)
  double jam_root(System & s, const Held & held, int j,
                  const std::function<bool(double, VecX &, VecX &)> & step, double h,
                  double event_tol);
  /// Painleve's pole inside a step: where a slipping point's normal row, with its
  /// friction, loses its effective mass (A M^-1 W^T singular), its multiplier with
  /// friction diverges and a step whose stage comes near it fails (x_bad: the shortest
  /// step that failed). The last step length that succeeds below x_bad (bisection to
  /// event_tol) and the slipping spec whose multiplier with friction is largest there:
  /// the point the diverging force stops (jam); -1 where no point slips (the step length
  /// still found). {-1, 0}: no step failed
  std::pair<int, double> pole(System & s, const Held & held,
                              const std::function<bool(double, VecX &, VecX &)> & step,
                              double x_bad, double event_tol);
  /// spec j, slipping in Painleve's case at the System's state, sticks by a tangential
  /// impulse (an impact without collision, Genot and Brogliato 1999): the velocity
  /// nearest in the metric of M with its point stuck and every held row kept, its energy
  /// the "jam" event's; it is held stuck to the step's end (watch)
  void jam(System & s, const Held & held, int j, double t, EventGuard & guard,
           std::vector<LimitEventRec> & events, SlipWatch & watch);
  /// the tangential acceleration [m/s^2] of contact spec j's material point at the
  /// acceleration a (d's frames; relative to the plane body's point there)
  Vec3 slip_acceleration(const Model & mo, const Data & d, const VecX & a, int j);
  /// the direction s (world, unit) a stuck point of spec j starts to slip along at the
  /// System's state: its tangential acceleration with friction -mu f_n s is along +s
  /// (slip_onset.cpp) and its normal force pushes (push_held's split, tol); s0 the guess
  /// in, the direction out; false where none is found (the Model's mode of j is left
  /// slipping: the caller sets it)
  bool slip_onset(System & s, const Held & held, int j, double tol, Vec3 & s0);
  /// the held contact entry that owns each of the m active rows (its normal row, its
  /// tangential rows while it sticks), -1 for the loop's and the limits' rows
  std::vector<int> row_owner(const Model & mo, const Held & held, long m);
  /// the velocity after an impact with friction at the System's state (d's frames and
  /// rows; friction_impact.cpp): the points in (their normal rows R to their targets; the
  /// plastic ones with friction stopped along the surface where the impulse that needs
  /// lies inside the cone, else slipping through it with Coulomb's impulse, as do the held
  /// points that slip: algorithms/slip_impact.hpp) with the active rows of the held entries
  /// keep names (1) kept. A held contact point whose impulse would pull lets go (keep 0:
  /// Housner's rocking block leaves its old edge) where may_go (by held entry) allows (the
  /// event guard's pins: a pinned point stays held)
  VecX friction_impact(
    System & s, const MatX & M, const VecX & v, const std::vector<ContactPoint> & in,
    const MatX & R, const VecX & target, const std::vector<int> & plastic, const Held & held,
    const std::vector<int> & may_go, std::vector<int> & keep);
} // namespace pfaff
