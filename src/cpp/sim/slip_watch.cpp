// The slip directions of a limited run's slipping contact points (friction.hpp's
// SlipWatch): a slip velocity that turns against the last sample's direction is a located
// event, and the chatter rules' clocks (a second stop within a step, a stick soon after a
// slip) per contact spec.
#include "sim/friction.hpp"
#include "model/core.hpp"
#include "sim/limit_detail.hpp"
#include "sim/system.hpp"

#include <cmath>
#include <iterator>
#include <limits>

namespace pfaff
{
  namespace
  {
    // a slip velocity against the last sample's direction by more than this turned [m/s]
    // (round-off of a point at rest is far below it)
    constexpr double kTurn = 1e-12;
    // below this slip speed a slipping point's direction is its s0 [m/s] (as
    // algorithms/friction.cpp's)
    constexpr double kSpeed = 1e-10;
    constexpr double kInfTime = std::numeric_limits<double>::infinity();
  } // namespace

  std::vector<int> SlipWatch::turned(
    System & s, const Held & held, const VecX & q, const VecX & v, bool update)
  {
    std::vector<int> out;
    std::vector<std::pair<int, ContactMode>> moved; // s0: the direction at this sample
    const Model & mo = s.mo();
    bool kin = false;
    fit(mo.contact_specs.size());
    for (const auto & [i, j] : held)
    {
      if (!slipping(mo, i, j))
        continue;
      if (!kin)
        frames_at(s, q, v);
      kin = true;
      const Vec3 vt = slip_velocity(mo, s.d(), v, j);
      Vec3 & dj = dir_[std::size_t(j)];
      if (dj.squaredNorm() > 0.0 && vt.dot(dj) < -kTurn)
        out.push_back(j);
      else if (update && vt.norm() > kSpeed)
      {
        dj = vt.normalized();
        ContactMode md = mo.contact_mode[std::size_t(j)];
        md.s0 = dj;
        moved.emplace_back(j, md);
      }
      else if (update)
        dj = mo.contact_mode[std::size_t(j)].s0;
    }
    // the step from this sample slips along these (algorithms/friction.cpp's s0)
    if (!moved.empty())
      s.change_model(
        [&](ModelBuilder & b) {
          for (const auto & [j, md] : moved)
            b.set_contact_mode(j, md);
          b.set_held_rows(held);
        },
        false);
    return out;
  }

  double SlipWatch::root(
    System & s, int j, const std::function<bool(double, VecX &, VecX &)> & step, double h,
    double event_tol)
  {
    const Vec3 dj = dir_.at(std::size_t(j));
    bool bad = false;
    auto g = [&](double x) {
      VecX q, v;
      if (!step(x, q, v))
      {
        bad = true;
        return -1.0;
      }
      frames_at(s, q, v);
      return slip_velocity(s.mo(), s.d(), v, j).dot(dj) + kTurn;
    };
    const double x = first_root(g, 1.0, h, event_tol);
    return bad ? std::numeric_limits<double>::quiet_NaN() : x;
  }

  void SlipWatch::forget(int j)
  {
    if (std::size_t(j) < dir_.size())
      dir_[std::size_t(j)].setZero();
  }

  void SlipWatch::restart()
  {
    for (Vec3 & d : dir_)
      d.setZero();
  }

  void SlipWatch::fit(std::size_t n)
  {
    if (dir_.size() >= n)
      return;
    dir_.resize(n, Vec3::Zero());
    for (auto * x : {&last_, &start_, &hold_})
      x->resize(n, -kInfTime);
  }

  bool SlipWatch::again(int j, double t, double dt)
  {
    fit(std::size_t(j) + 1);
    const bool same = t - last_[std::size_t(j)] < dt;
    last_[std::size_t(j)] = t;
    return same;
  }

  void SlipWatch::hold(int j, double until)
  {
    fit(std::size_t(j) + 1);
    hold_[std::size_t(j)] = until;
  }

  void SlipWatch::slipped(int j, double t)
  {
    fit(std::size_t(j) + 1);
    start_[std::size_t(j)] = t;
  }

  void SlipWatch::stuck(int j, double t, double dt)
  {
    fit(std::size_t(j) + 1);
    if (t - start_[std::size_t(j)] < dt)
      hold_[std::size_t(j)] = std::max(hold_[std::size_t(j)], t + dt);
  }

  bool SlipWatch::holds(int j, double t) const
  {
    return std::size_t(j) < hold_.size() && t < hold_[std::size_t(j)];
  }

  double SlipWatch::started(int j) const
  {
    return std::size_t(j) < start_.size() ? start_[std::size_t(j)] : -kInfTime;
  }

  SlipWatch SlipWatch::ordered(const std::vector<int> & specs) const
  {
    SlipWatch w;
    w.fit(specs.size());
    for (std::size_t c = 0; c < specs.size(); ++c)
    {
      const std::size_t j = std::size_t(specs[c]);
      if (j >= dir_.size())
        continue; // never watched: as new
      w.dir_[c] = dir_[j];
      w.last_[c] = last_[j];
      w.start_[c] = start_[j];
      w.hold_[c] = hold_[j];
    }
    return w;
  }

  void take_up(const RunMemory * memory, double t0, double dt, int U, EventGuard & guard,
               SlipWatch & slips, std::vector<LimitEventRec> & events)
  {
    if (memory && memory->guard && int(memory->guard->size()) == U
        && std::abs(memory->t_end - t0) <= 1e-9 * dt)
    {
      guard = *memory->guard;
      slips = memory->slips;
      events.insert(events.begin(), memory->pending.begin(), memory->pending.end());
    }
  }

  void remember(RunMemory * memory, double t, const Held & held, int L, const EventGuard & guard,
                const SlipWatch & slips, std::vector<LimitEventRec> & events)
  {
    if (!memory)
      return;
    std::vector<int> specs; // the held contact points in held order
    for (const auto & [i, j] : held)
      if (i >= L)
        specs.push_back(j);
    // leave_cone's slips of this instant (kind 3 at zero slip speed), the last events
    auto from = events.end();
    while (from != events.begin() && std::prev(from)->t >= t - 1e-9 * guard.dt()
           && cone_slip(*std::prev(from)))
      --from;
    *memory = RunMemory{t, guard, slips.ordered(specs), {from, events.end()}};
    events.erase(from, events.end());
  }

} // namespace pfaff
