// The binding of the tables and rules both languages read (tables.hpp, options.def,
// series.def, status.def): the Options and Status types, the tables as tuples of rows
// and the rule functions. pfaff.simulate.policy builds its Python side from these.
#include <climits>
#include <cstdint>
#include <string>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings/bind.hpp"
#include "model/core.hpp"
#include "tables/tables.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace pfaff
{
  namespace
  {
    /// a series' width as Python names it: None (one number per sample) or its size name
    nb::object width_name(Width w)
    {
      switch (w)
      {
      case Width::nq:
        return nb::str("nq");
      case Width::nv:
        return nb::str("nv");
      case Width::m:
        return nb::str("m");
      case Width::m_h:
        return nb::str("m_h");
      case Width::na:
        return nb::str("na");
      default:
        return nb::none();
      }
    }
  } // namespace

  void bind_tables(nb::module_ & m)
  {
    // -- the options: one def_rw per row of options.def, and the rows (name, doc) --------
    nb::class_<Options> opts(
      m, "Options", "the options of a run (options.def, the one table; defaults included)");
    opts.def(nb::init<>());
#define PFAFF_OPTION(type, name, value, doc) opts.def_rw(#name, &Options::name, doc);
#include "tables/options.def"
#undef PFAFF_OPTION
    nb::list option_rows;
#define PFAFF_OPTION(type, name, value, doc) option_rows.append(nb::make_tuple(#name, doc));
#include "tables/options.def"
#undef PFAFF_OPTION
    m.attr("OPTIONS") = nb::tuple(option_rows);

    // -- how a run ends: Status and the rows (name, code, doc) ---------------------------
    nb::class_<Status>(m, "Status",
                       "how a run ended: code as status.def (pfaff._core.STATUS) lists them; "
                       "pfaff.simulate.policy.status_message words it")
      .def(nb::init<>())
      .def_rw("code", &Status::code)
      .def_rw("what", &Status::what)
      .def_rw("index", &Status::index)
      .def_rw("value", &Status::value)
      .def_rw("t", &Status::t)
      .def_rw("step", &Status::step)
      .def_rw("iterations", &Status::iterations)
      .def_rw("extra", &Status::extra)
      .def("__repr__", [](const Status & s) {
        return "Status(code=" + std::to_string(s.code) + ", what='" + s.what
               + "', step=" + std::to_string(s.step) + ")";
      });
    nb::list status_rows;
#define PFAFF_STATUS(id, code, doc)                                               \
  status_rows.append(nb::make_tuple(#id, int(code), doc));
#include "tables/status.def"
#undef PFAFF_STATUS
    m.attr("STATUS") = nb::tuple(status_rows);

    // -- the series: rows (name, width, buffer, unit, doc) -------------------------------
    nb::list series_rows;
    for (const SeriesRow & s : series_table)
      series_rows.append(nb::make_tuple(
        s.name, width_name(s.width), s.buffer == Buffer::record ? "record" : "force", s.unit,
        s.doc));
    m.attr("SERIES") = nb::tuple(series_rows);

    // -- the rules -----------------------------------------------------------------------
    m.def(
      "record_due",
      [](std::int64_t k, std::int64_t every, std::int64_t n_steps) {
        Check{"record_due"}
          .index(every, LONG_MAX, "every", ">= 1", 1)
          .index(n_steps, LONG_MAX, "n_steps", ">= 0")
          .index(k, n_steps + 1, "k", "a step 0 .. n_steps");
        return record_due(k, every, n_steps);
      },
      "k"_a, "every"_a, "n_steps"_a,
      "True when a run of n_steps steps records step k: k % every == 0 or k == n_steps");
    m.def(
      "record_count",
      [](std::int64_t n_steps, std::int64_t every) {
        Check{"record_count"}
          .index(every, LONG_MAX, "every", ">= 1", 1)
          .index(n_steps, LONG_MAX, "n_steps", ">= 0");
        return record_count(n_steps, every);
      },
      "n_steps"_a, "every"_a, "the samples a full run of n_steps steps records (record_due)");
    m.attr("SAMPLE_TOL") = SAMPLE_TOL;
    m.def("sample_due", &sample_due, "t"_a, "next"_a, "dt"_a,
          "True when the controller's sample at next is due at the step time t (steps of dt): "
          "t >= next - SAMPLE_TOL dt");

    // -- an observed frame's row of a Sample: (name, start, stop, rows, cols) ------------
    m.def(
      "frame_row",
      [](int nv) {
        Check{"frame_row"}.index(nv, INT_MAX, "nv", ">= 0");
        std::vector<std::tuple<std::string, int, int, int, int>> out;
        for (int i = 0; i < int(FrameField::count); ++i)
        {
          const FrameField f = FrameField(i);
          const FrameFieldRow & r = frame_fields[i];
          const int start = frame_field_start(f, nv);
          out.emplace_back(
            r.name, start, start + frame_field_size(f, nv), r.rows, r.cols < 0 ? nv : r.cols);
        }
        return out;
      },
      "nv"_a,
      "the fields of an observed frame's row of Sample.frames for nv velocities: (name, "
      "start, stop, rows, cols), p, R and J row by row, drift");
  }
} // namespace pfaff
