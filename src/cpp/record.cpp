// The recorder (record.hpp): the record buffers' widths and checks, and one sample.
#include "record.hpp"
#include "check.hpp"
#include "core.hpp"

#include <climits>
#include <stdexcept>
#include <string>

namespace pfaff
{
  std::size_t record_width(const Model & mo, int i)
  {
    switch (series_table[i].width)
    {
    case Width::nq:
      return std::size_t(mo.nq());
    case Width::nv:
      return std::size_t(mo.nv());
    case Width::m:
      return std::size_t(mo.m);
    case Width::m_h:
      return std::size_t(mo.m_h);
    default:
      return 1;
    }
  }

  void check_buffers(
    const Model & mo, const char * where, const std::vector<std::size_t> & sizes, int capacity)
  {
    for (int i = 0; i < Recorder::n_buffers; ++i) // refuse a buffer record() would overflow
      if (sizes[std::size_t(i)] < record_width(mo, i) * std::size_t(capacity))
        Check{where}.fail(
          "record buffer " + std::to_string(i) + " holds "
          + std::to_string(sizes[std::size_t(i)]) + " values, "
          + std::to_string(record_width(mo, i) * std::size_t(capacity)) + " needed (capacity "
          + std::to_string(capacity) + " x width " + std::to_string(record_width(mo, i)) + ")");
  }

  void Recorder::set_buffers(
    const Model & mo, const std::vector<double *> & b, const std::vector<std::size_t> & s,
    int cap)
  {
    const Check c{"System.set_buffers"};
    if (b.size() != std::size_t(n_buffers) || s.size() != std::size_t(n_buffers))
      c.fail("buffers has " + std::to_string(b.size()) + " arrays: expected "
             + std::to_string(n_buffers) + " record buffers (the record series of "
             "series.def: pfaff.simulate.policy.CORE_SERIES)");
    c.index(cap, INT_MAX, "capacity", ">= 0");
    check_buffers(mo, c.where, s, cap);
    bufs = b;
    sizes = s;
    capacity = cap;
    recorded = 0;
  }

  void record(const Model & mo, const Data & d, const StepState & s, Recorder & r, double t)
  {
    if (r.recorded >= r.capacity || (r.fbuf[0] && r.recorded >= r.fcap))
      throw std::runtime_error("record buffers full");
    const int i = r.recorded++;
    using S = SeriesId;
    auto row = [&](S b, const VecX & x) {
      if (x.size())
        Eigen::Map<VecX>(r.bufs[std::size_t(buffer_index(b))] + std::size_t(i) * x.size(),
                         x.size()) = x;
    };
    auto at = [&](S b) -> double & { return r.bufs[std::size_t(buffer_index(b))][i]; };
    at(S::t) = t;
    row(S::q, s.q_);
    row(S::v, s.v_);
    row(S::a, d.a_);
    row(S::tau, s.tau_);
    row(S::F, d.F_);
    row(S::lam, d.lam_);
    r.av.noalias() = d.A * s.v_;
    row(S::av, r.av);
    row(S::phi, d.phi);
    at(S::rank) = d.rs_.rank;
    at(S::sigma_min) = d.rs_.sigma_min;
    const double pot = d.potential - mo.opt.potential_offset;
    at(S::kinetic) = d.kinetic;
    at(S::potential) = pot;
    at(S::energy) = d.kinetic + pot;
    at(S::work) = s.work;
    at(S::correction_energy) = s.corr;
    at(S::newton_iterations) = s.newton_it;
    if (r.fbuf[0])
    {
      r.fbuf[buffer_index(S::force_work)][i] = s.force_work;
      r.fbuf[buffer_index(S::force_potential)][i] = d.felems.V;
    }
  }
} // namespace pfaff
