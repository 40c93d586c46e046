// The compiled engine's set-up (see core.hpp): the frames, the constraint specs (each
// kind's rows and checks in src/cpp/kinds/), the rolling contacts and the force
// elements. The per-state terms are in terms.cpp, the rows in rows.cpp, the row space in
// row_space.cpp (its sigma_min in sigma_min.cpp), the dynamics in projection.cpp, the
// step loop and the correction in step.cpp; the NumPy functions each block mirrors are
// named in its comment.
#include "model/core.hpp"
#include "model/check.hpp"
#include "model/core_detail.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "pinocchio/algorithm/cholesky.hpp"
#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/algorithm/energy.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "pinocchio/algorithm/rnea.hpp"

namespace pfaff
{
  using detail::abs_max;
  using detail::kNaN;
  using detail::skew;


  // per kind (kinds.def's third column): its rows are 0.0 outside its frames' trees'
  // columns (Model::row_cols)
  const bool kind_window[] = {
#define PFAFF_KIND(K, rows, window, holonomic) window != 0,
#include "kinds.def"
#undef PFAFF_KIND
  };

  // FrameState.point / point_jacobian / point_drift of a point fixed in a frame
  void kinds::point_terms(
    const FrameKin & f, bool has_off, const Vec3 & off, const RowOut & out, Vec3 & p,
    Matrix3x & Jp, Vec3 & ap)
  {
    const bool with_drift = out.with_drift;
    const auto J = f.J.middleCols(out.c0, out.w);
    if (!has_off)
    {
      p = f.p;
      Jp.leftCols(out.w) = J.topRows<3>();
      if (with_drift)
        ap = f.drift.head<3>();
      return;
    }
    const Vec3 r = f.R * off;
    p = f.p + r;
    Jp.leftCols(out.w).noalias() = J.topRows<3>() - skew(r).lazyProduct(J.bottomRows<3>());
    if (with_drift)
      ap = point_drift(f, true, off);
  }

  Vec3 kinds::point_drift(const FrameKin & f, bool has_off, const Vec3 & off)
  {
    if (!has_off)
      return f.drift.head<3>();
    const Vec3 r = f.R * off;
    return f.drift.head<3>() + f.drift.tail<3>().cross(r) + f.w.cross(f.w.cross(r));
  }

  Model::Model(const std::string & model_data, bool binary)
  : model(load_model(model_data, binary))
  {
    // Runge-Kutta-Munthe-Kaas stages where q lives on a Lie group (nq != nv):
    // d integrate / d theta is block diagonal, one block per joint; the multi-dof
    // joints' blocks get an LU each (Data::lu_blocks_; a 3-dof joint's and a free
    // flyer's take closed-form 3 x 3 inverses instead: stage_rate), the 1-dof joints'
    // are scalars
    lie_ = model.nq != model.nv;
    mimic = model.nvExtended != model.nv;
    for (pinocchio::JointIndex j = 1; j < pinocchio::JointIndex(model.njoints); ++j)
      if (model.nvs[j] > 1)
        lie_blocks_.emplace_back(model.idx_vs[j], model.nvs[j]);
    col_tree.assign(size_t(model.nv), -1);
    std::vector<int> tree_of(size_t(model.njoints), -1);
    for (pinocchio::JointIndex j = 1; j < pinocchio::JointIndex(model.njoints); ++j)
    {
      const auto p = model.parents[j];
      tree_of[j] = p == 0 ? ntrees++ : tree_of[p];
      for (int k = 0; k < model.nvs[j]; ++k)
        col_tree[size_t(model.idx_vs[j] + k)] = tree_of[j];
    }
    // each tree's columns, where they are consecutive and in the trees' order (as
    // Pinocchio's parsers number the joints, depth first)
    for (int j = 0; j < model.nv; ++j)
    {
      const int t = col_tree[size_t(j)], last = int(tree_cols.size()) - 1;
      if (t == last + 1)
        tree_cols.emplace_back(j, 1);
      else if (t == last && tree_cols.back().first + tree_cols.back().second == j)
        ++tree_cols.back().second;
      else
      {
        tree_cols.clear(); // interleaved: M is taken whole
        break;
      }
    }
  }

  Data::Data(const Model & mo)
  : data(mo.model)
  , data_g(mo.model)
  {
    const int nv = mo.model.nv;
    fit(mo);
    M.setZero(nv, nv);
    h.setZero(nv);
    Jp1_.setZero(3, nv);
    Jp2_.setZero(3, nv);
    Gjw_.setZero(3, nv);
    qs_ = pinocchio::neutral(mo.model);
    q1_ = qs_;
    dv_.setZero(nv);
    // the off-diagonal blocks of d integrate / d theta stay zero (dIntegrate sets the
    // joints' diagonal blocks)
    Jint_.setZero(nv, nv);
    for (const auto & blk : mo.lie_blocks_) // (idx_v, nv)
      lu_blocks_.emplace_back(blk.second);
    th_.setZero(nv);
  }

  void Data::fit(const Model & mo)
  {
    const int nv = mo.model.nv;
    frames.resize(mo.frame_slots.size(), FrameKin(nv));
    obs_frames.resize(mo.obs_slots.size(), FrameKin(nv));
    contact_geometry.resize(mo.contacts.size(), ContactGeometry(nv));
    if (!mo.force_elements.empty() && felems.Q.size() != nv) // the force elements' terms
      felems.resize(nv);
    if (A.rows() != mo.m || A.cols() != nv) // rows (none: an unconstrained system)
    {
      A.setZero(mo.m, nv);
      drift.setZero(mo.m);
    }
    if (A_h.rows() != mo.m_h || A_h.cols() != nv)
    {
      A_h.setZero(mo.m_h, nv);
      phi.setZero(mo.m_h);
    }
    if (acc_.size() != size_t(mo.stages())) // the stages' workspaces (set_tableau)
    {
      acc_.assign(size_t(mo.stages()), VecX::Zero(nv));
      rate_.assign(size_t(mo.stages()), VecX::Zero(nv));
      power_.assign(size_t(mo.stages()), 0.0);
    }
    st_.next();
  }

  System::System(const std::string & model_data, bool binary)
  : Model(model_data, binary)
  , Data(static_cast<const Model &>(*this))
  {
    const int nv = model.nv;
    q_ = pinocchio::neutral(model);
    v_.setZero(nv);
    tau_.setZero(nv);
    // RK4 until set_tableau says otherwise (pfaff.simulate.tableaus holds the methods)
    MatX a = MatX::Zero(4, 4);
    a(1, 0) = a(2, 1) = 0.5;
    a(3, 2) = 1.0;
    VecX b(4);
    b << 1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0;
    set_tableau(a, b);
  }

  void System::set_tableau(const MatX & a, const VecX & b)
  {
    tab_a_ = a;
    tab_b_ = b;
    tab_c_ = a.rowwise().sum();
    fit(mo());
  }

  FrameSlot System::new_frame(const std::string & name, const char * where) const
  {
    if (!model.existFrame(name))
      Check{where}.fail("unknown frame '" + name + "' (the model has "
                        + std::to_string(model.nframes) + " frames)");
    FrameSlot f;
    f.id = model.getFrameId(name);
    f.joint = model.frames[f.id].parentJoint;
    if (f.joint > 0)
    {
      pinocchio::JointIndex root = f.joint;
      while (model.parents[root] != 0)
        root = model.parents[root];
      f.c0 = model.idx_vs[root];
      f.c1 = model.idx_vs[f.joint] + model.nvs[f.joint];
    }
    return f;
  }

  namespace
  {
    int slot_of(std::vector<FrameSlot> & fs, const FrameSlot & f)
    {
      for (size_t i = 0; i < fs.size(); ++i)
        if (fs[i].id == f.id)
          return int(i);
      fs.push_back(f);
      return int(fs.size()) - 1;
    }
  } // namespace

  int System::add_frame(const std::string & name)
  {
    const int k = slot_of(frame_slots, new_frame(name, "System.add_frame"));
    fit(mo());
    return k;
  }

  int System::observe(const std::string & name)
  {
    const int k = slot_of(obs_slots, new_frame(name, "System.observe"));
    fit(mo());
    return k;
  }

  void System::add(const Spec & s)
  {
    const Check c{"System.add"};
    // the rows each kind writes (kinds.def): fixed for all but the direction kinds
    static const int kind_rows[] = {
#define PFAFF_KIND(K, rows, window, holonomic) rows,
#include "kinds.def"
#undef PFAFF_KIND
    };
    // the kind's own checks (src/cpp/kinds/*.cpp), by its position in kinds.def
    using CheckFn = void (*)(const Model &, const Spec &, const Check &);
    static const CheckFn checks[] = {
#define PFAFF_KIND(K, rows, window, holonomic) &kinds::check_##K,
#include "kinds.def"
#undef PFAFF_KIND
    };
    const int k = static_cast<int>(s.kind);
    if (k < 0 || k >= int(sizeof(kind_rows) / sizeof(int)))
      c.fail("spec.kind = " + std::to_string(k) + " is not a kind of kinds.def");
    const int dim = kind_rows[k] > 0 ? kind_rows[k] : s.dim;
    if (s.dim != dim || s.dim < 1)
      c.fail("spec.dim = " + std::to_string(s.dim) + ": this kind writes "
             + std::to_string(dim) + " row(s)");
    const long nf = long(frame_slots.size());
    c.index(s.s2, nf, "spec.s2", "a frame slot of add_frame, or -1: the world", -1);
    checks[k](mo(), s, c);
    if (s.scale.size() != 0)
      c.vec(s.scale, s.dim, "spec.scale", "one row factor per row (dim), or none");
    c.finite(s.p1, "spec.p1").finite(s.p2, "spec.p2").finite(s.n, "spec.n");
    c.finite(s.target, "spec.target").finite(s.R_off, "spec.R_off");
    c.finite(s.R_right, "spec.R_right").finite(s.c, "spec.c");
    c.number(s.d, "spec.d", -HUGE_VAL, false).number(s.value, "spec.value", -HUGE_VAL, false);
    c.number(s.c0, "spec.c0", -HUGE_VAL, false).number(s.c1, "spec.c1", -HUGE_VAL, false);
    specs.push_back(s);
    std::pair<int, int> cols{0, model.nv};
    if (kind_window[k])
    {
      int c0 = model.nv, c1 = 0;
      for (int slot : {s.s1, s.s2})
        if (slot >= 0 && frame_slots[size_t(slot)].c1 > frame_slots[size_t(slot)].c0)
        {
          c0 = std::min(c0, frame_slots[size_t(slot)].c0);
          c1 = std::max(c1, frame_slots[size_t(slot)].c1);
        }
      cols = c1 > c0 ? std::pair<int, int>{c0, c1 - c0} : std::pair<int, int>{0, 0};
    }
    row_cols.insert(row_cols.end(), size_t(s.dim), cols);
    for (int i = 0; i < s.dim; ++i)
    {
      (holonomic(s) ? hol_rows : pf_rows).push_back(m + i);
      if (s.unilateral)
        uni_rows.push_back(m + i);
    }
    m += s.dim;
    if (holonomic(s))
      m_h += s.dim;
    one_block = rows_in_one_block(false);
    one_block_h = rows_in_one_block(true);
    fit(mo());
  }

  bool Model::rows_in_one_block(bool holonomic_only) const
  {
    if (ntrees < 2)
      return false; // find_blocks takes A whole anyway
    // the kinematic tree of a frame slot: its columns' (FrameSlot c0, c1; -1: the world)
    const auto tree = [&](int slot)
    {
      if (slot < 0)
        return -1;
      const FrameSlot & f = frame_slots[size_t(slot)];
      return f.c1 > f.c0 ? col_tree[size_t(f.c0)] : -1;
    };
    std::vector<int> link(static_cast<size_t>(ntrees)), touched;
    for (int t = 0; t < ntrees; ++t)
      link[size_t(t)] = t;
    for (const auto & s : specs)
    {
      if (holonomic_only && !holonomic(s))
        continue;
      if (!kind_window[static_cast<int>(s.kind)])
        return false; // rows over all the columns: their trees are known only from A
      const int t1 = tree(s.s1), t2 = tree(s.s2);
      for (int t : {t1, t2})
        if (t >= 0)
          touched.push_back(t);
      if (t1 >= 0 && t2 >= 0)
        link[size_t(detail::uf_root(link, t1))] = detail::uf_root(link, t2);
    }
    if (touched.empty())
      return false;
    for (int t : touched)
      if (detail::uf_root(link, t) != detail::uf_root(link, touched.front()))
        return false;
    return true;
  }

  int System::add_contact(const Contour & contour, int s_obj, int s_tip, double r)
  {
    const Check ck{"System.add_contact"};
    contour.check(ck.where);
    ck.index(s_obj, long(frame_slots.size()), "s_obj", "the object's frame slot of add_frame");
    ck.index(s_tip, long(frame_slots.size()), "s_tip", "the fingertip's frame slot of add_frame");
    ck.number(r, "r (the fingertip radius) [m]", 0.0, true);
    RollingContact c;
    c.contour = contour;
    c.s_obj = s_obj;
    c.s_tip = s_tip;
    c.r = r;
    contacts.push_back(std::move(c));
    fit(mo());
    return int(contacts.size()) - 1;
  }

  void System::check_force(const ForceSpec & f, const char * where) const
  {
    const Check c{where};
    // the element's own checks (src/cpp/forces/*.cpp), by its position in forces.def
    using CheckFn = void (*)(const Model &, const ForceSpec &, const Check &);
    static const CheckFn checks[] = {
#define PFAFF_FORCE(K, points, gravity) &force_elements::check_##K,
#include "forces.def"
#undef PFAFF_FORCE
    };
    const int k = static_cast<int>(f.kind);
    if (k < 0 || k >= int(sizeof(checks) / sizeof(CheckFn)))
      c.fail("spec.kind = " + std::to_string(k) + " is not a force element of forces.def");
    const long nf = long(frame_slots.size());
    const int points = force_points(f.kind); // the body points it reads (forces.def)
    if (points >= 1)
      c.index(f.s1, nf, "spec.s1", "a frame slot of add_frame");
    if (points == 2)
      c.index(f.s2, nf, "spec.s2", "a frame slot of add_frame, or -1: the world", -1);
    for (const double x : {f.k, f.L0, f.k3, f.c})
      c.number(x, "spec.k, L0, k3, c", 0.0, false);
    c.number(f.rest, "spec.rest", -HUGE_VAL, false);
    c.finite(f.p1, "spec.p1").finite(f.p2, "spec.p2").finite(f.target, "spec.target");
    c.finite(f.F, "spec.F");
    checks[k](mo(), f, c);
  }

  void System::add_force(const ForceSpec & spec)
  {
    check_force(spec, "System.add_force");
    force_elements.add(spec);
    fit(mo());
  }

  void System::add_held_force(const ForceSpec & spec)
  {
    check_force(spec, "System.add_held_force");
    held.add(spec);
    held_terms.resize(model.nv);
  }
} // namespace pfaff
