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
    // the rows record() writes: t, q, v, a, tau, F, lambda, A v, Phi, then eight scalars
    const int w[9] = {1, mo.nq(), mo.nv(), mo.nv(), mo.nv(), mo.nv(), mo.m, mo.m, mo.m_h};
    return i < 9 ? std::size_t(w[i]) : 1;
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
             + std::to_string(n_buffers) + " record "
             "buffers (t, q, v, a, tau, F, lambda, A v, Phi and eight scalars)");
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
    auto row = [&](int b, const VecX & x) {
      if (x.size())
        Eigen::Map<VecX>(r.bufs[std::size_t(b)] + std::size_t(i) * x.size(), x.size()) = x;
    };
    double * const * bufs = r.bufs.data();
    bufs[0][i] = t;
    row(1, s.q_);
    row(2, s.v_);
    row(3, d.a_);
    row(4, s.tau_);
    row(5, d.F_);
    row(6, d.lam_);
    r.av.noalias() = d.A * s.v_;
    row(7, r.av);
    row(8, d.phi);
    bufs[9][i] = d.rs_.rank;
    bufs[10][i] = d.rs_.sigma_min;
    const double pot = d.potential - mo.opt.potential_offset;
    bufs[11][i] = d.kinetic;
    bufs[12][i] = pot;
    bufs[13][i] = d.kinetic + pot;
    bufs[14][i] = s.work;
    bufs[15][i] = s.corr;
    bufs[16][i] = s.newton_it;
    if (r.fbuf[0])
    {
      r.fbuf[0][i] = s.force_work;
      r.fbuf[1][i] = d.felems.V;
    }
  }
} // namespace pfaff
