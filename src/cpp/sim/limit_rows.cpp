// The rows of a System's joint limits (limits.hpp): a limit added after the loop's
// constraints, and the active row set of a held set (the loop's rows, then a
// LockedJoint row at its bound per held limit). Both change the Model through a
// ModelBuilder (model/builder.cpp holds the checks and the rows).
#include "sim/limits.hpp"
#include "sim/system.hpp"

namespace pfaff
{
  void add_limit(System & s, const JointLimit & lim)
  {
    s.change_model([&](ModelBuilder & b) { b.add_limit(lim); });
  }

  void set_held_rows(System & s, const Held & held)
  {
    if (s.mo().loop.specs < 0)
      return; // no limit: the rows are the loop's
    s.change_model([&](ModelBuilder & b) { b.set_held_rows(held); });
  }
} // namespace pfaff
