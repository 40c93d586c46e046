// The recorder (record.hpp): the record buffers' widths and checks, and one sample.
#include "sim/record.hpp"
#include "model/check.hpp"
#include "model/core.hpp"
#include "sim/sample.hpp"

#include <climits>
#include <stdexcept>
#include <string>
#include <type_traits>

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
    case Width::na:
      return std::size_t(activation_count(mo));
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
    const bool forces = r.fbuf[0] != nullptr;
    each_series(mo, d, s, t, r.av, nullptr, forces, [&](SeriesId b, const auto & x) {
      const std::size_t k = std::size_t(buffer_index(b));
      if constexpr (std::is_arithmetic_v<std::decay_t<decltype(x)>>)
        (series_table[int(b)].buffer == Buffer::force ? r.fbuf[k] : r.bufs[k])[i] = x;
      else if (x.size())
        Eigen::Map<VecX>(r.bufs[k] + std::size_t(i) * x.size(), x.size()) = x;
    });
  }
} // namespace pfaff
