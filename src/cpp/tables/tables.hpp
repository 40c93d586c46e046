// The rules and tables of a run that both languages read, each written once here and
// exported to Python by bind_tables.cpp (pfaff.simulate.policy reads them):
// - the options (options.def: the struct Options, core_types.hpp);
// - the recorded series (series.def: SeriesId, the record buffers' order and widths);
// - how a run ends (status.def: status_code, Status::code);
// - the record rule (record_due, record_count) and the controller's due rule
//   (sample_due, SAMPLE_TOL);
// - the layout of an observed frame's row of a controller's Sample (frame_row).
#pragma once

#include <cstdint>

namespace pfaff
{
  // -- the recorded series --------------------------------------------------------------
  /// what a series' row holds per sample: one number, or nq, nv, m, m_h or na values
  enum class Width : int
  {
    one,
    nq,
    nv,
    m,
    m_h,
    na
  };
  /// the buffers a series is written into: the record buffers or the force buffers
  enum class Buffer : int
  {
    record,
    force
  };
  /// the series of series.def, in its order
  enum class SeriesId : int
  {
#define PFAFF_SERIES(id, name, width, buffer, unit, doc) id,
#include "tables/series.def"
#undef PFAFF_SERIES
    count
  };
  /// one row of series.def
  struct SeriesRow
  {
    const char * name;
    Width width;
    Buffer buffer;
    const char * unit;
    const char * doc;
  };
  inline constexpr SeriesRow series_table[] = {
#define PFAFF_SERIES(id, name, width, buffer, unit, doc)                                      \
  {name, Width::width, Buffer::buffer, unit, doc},
#include "tables/series.def"
#undef PFAFF_SERIES
  };
  /// the number of record buffers: the series of series.def with buffer record
  constexpr int record_series()
  {
    int n = 0;
    for (const SeriesRow & s : series_table)
      n += s.buffer == Buffer::record;
    return n;
  }
  /// true when every record series precedes every force series: a series' buffer index
  /// is then its id (record) or its id minus record_series() (force)
  constexpr bool series_ordered()
  {
    bool force = false;
    for (const SeriesRow & s : series_table)
    {
      if (force && s.buffer == Buffer::record)
        return false;
      force = force || s.buffer == Buffer::force;
    }
    return true;
  }
  static_assert(series_ordered(), "series.def: the record series come before the force series");
  static_assert(int(SeriesId::count) == int(sizeof(series_table) / sizeof(SeriesRow)),
                "series.def: one id per row");

  /// the index of series s among the buffers of its kind (record or force)
  constexpr int buffer_index(SeriesId s)
  {
    const int i = int(s);
    return series_table[i].buffer == Buffer::record ? i : i - record_series();
  }

  // -- how a run ends ---------------------------------------------------------------------
  /// the codes of Status::code (status.def)
  namespace status_code
  {
    enum : int
    {
#define PFAFF_STATUS(id, code, doc) id = code,
#include "tables/status.def"
#undef PFAFF_STATUS
    };
  } // namespace status_code

  // -- the record rule and the controller's due rule --------------------------------------
  /// true when the run records step k of n_steps: every `every`-th step and the last
  inline bool record_due(std::int64_t k, std::int64_t every, std::int64_t n_steps)
  {
    return k % every == 0 || k == n_steps;
  }
  /// the samples a full run of n_steps steps records (record_due over k = 0 .. n_steps)
  inline std::int64_t record_count(std::int64_t n_steps, std::int64_t every)
  {
    return n_steps / every + 1 + (n_steps % every ? 1 : 0);
  }
  /// a controller sample is due at step time t when t >= next - SAMPLE_TOL dt: the step
  /// times t0 + k dt carry round-off, the controller's instants t0 + j control_dt too
  inline constexpr double SAMPLE_TOL = 1e-9;
  /// true when the controller's sample at `next` is due at the step time t (steps of dt)
  inline bool sample_due(double t, double next, double dt)
  {
    return t >= next - SAMPLE_TOL * dt;
  }

  // -- an observed frame's row of a controller's Sample -----------------------------------
  /// the fields of the row: p (3), R row by row (3 x 3), J row by row (6 x nv), drift (6)
  enum class FrameField : int
  {
    p,
    R,
    J,
    drift,
    count
  };
  /// one field of the row: its name, its rows and columns (cols < 0: nv)
  struct FrameFieldRow
  {
    const char * name;
    int rows, cols;
  };
  inline constexpr FrameFieldRow frame_fields[] = {
    {"p", 3, 1}, {"R", 3, 3}, {"J", 6, -1}, {"drift", 6, 1}};
  /// the values of field f in a row of a model with nv velocities
  constexpr int frame_field_size(FrameField f, int nv)
  {
    const FrameFieldRow & r = frame_fields[int(f)];
    return r.rows * (r.cols < 0 ? nv : r.cols);
  }
  /// where field f starts in the row
  constexpr int frame_field_start(FrameField f, int nv)
  {
    int at = 0;
    for (int i = 0; i < int(f); ++i)
      at += frame_field_size(FrameField(i), nv);
    return at;
  }
  /// the width of the row
  constexpr int frame_row_width(int nv) { return frame_field_start(FrameField::count, nv); }
} // namespace pfaff
