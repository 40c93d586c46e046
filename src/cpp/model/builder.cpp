// The set-up of a Model (builder.hpp): the frames, the constraint specs (each kind's
// rows and checks in src/cpp/kinds/), the rolling contacts, the force elements, the
// tableau and the joint limits' rows. Each call checks what it is given before it
// changes the Model (a refused call leaves it as it was).
#include "model/builder.hpp"
#include "model/check.hpp"
#include "model/core_detail.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>


namespace pfaff
{
  ModelBuilder::ModelBuilder(const std::string & model_data, bool binary)
  : mo_(std::make_unique<Model>(model_data, binary))
  {
    // RK4 until set_tableau says otherwise (pfaff.simulate.tableaus holds the methods)
    MatX a = MatX::Zero(4, 4);
    a(1, 0) = a(2, 1) = 0.5;
    a(3, 2) = 1.0;
    VecX b(4);
    b << 1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0;
    set_tableau(a, b);
  }

  // a built Model is made by a builder (never const itself): it is changed in place
  ModelBuilder::ModelBuilder(std::unique_ptr<const Model> mo)
  : mo_(const_cast<Model *>(mo.release()))
  {
    if (!mo_)
      throw std::invalid_argument("ModelBuilder: no Model (it was handed to another builder)");
  }

  void ModelBuilder::set_tableau(const MatX & a, const VecX & b)
  {
    mo_->tab_a_ = a;
    mo_->tab_b_ = b;
    mo_->tab_c_ = a.rowwise().sum();
    mo_->ad_stages_ = 0;
  }

  void ModelBuilder::set_adaptive(
    const MatX & a, const VecX & b, const VecX & c, const VecX & e, const VecX & e3, int order)
  {
    Model & mo = *mo_;
    mo.ad_A_ = a;
    mo.ad_B_ = b;
    mo.ad_C_ = c;
    mo.ad_E_ = e;
    mo.ad_E3_ = e3;
    mo.ad_order_ = order;
    mo.ad_stages_ = int(b.size());
  }

  FrameSlot ModelBuilder::new_frame(const std::string & name, const char * where) const
  {
    const Model & mo = *mo_;
    if (!mo.model.existFrame(name))
      Check{where}.fail("unknown frame '" + name + "' (the model has "
                        + std::to_string(mo.model.nframes) + " frames)");
    FrameSlot f;
    // a name that repeats (a URDF's joint and link of one name) is its last frame, as
    // PinocchioMechanism.frame_id takes it: both engines hold the same frame
    for (pinocchio::FrameIndex i = 0; i < mo.model.frames.size(); ++i)
      if (mo.model.frames[i].name == name)
        f.id = i;
    f.joint = mo.model.frames[f.id].parentJoint;
    if (f.joint > 0)
    {
      pinocchio::JointIndex root = f.joint;
      while (mo.model.parents[root] != 0)
        root = mo.model.parents[root];
      f.c0 = mo.model.idx_vs[root];
      f.c1 = mo.model.idx_vs[f.joint] + mo.model.nvs[f.joint];
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

  int ModelBuilder::add_frame(const std::string & name)
  {
    Model & mo = *mo_;
    const int k = slot_of(mo.frame_slots, new_frame(name, "System.add_frame"));
    return k;
  }

  int ModelBuilder::observe(const std::string & name)
  {
    Model & mo = *mo_;
    const int k = slot_of(mo.obs_slots, new_frame(name, "System.observe"));
    return k;
  }

  void ModelBuilder::add(const Spec & s)
  {
    Model & mo = *mo_;
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
    const long nf = long(mo.frame_slots.size());
    c.index(s.s2, nf, "spec.s2", "a frame slot of add_frame, or -1: the world", -1);
    checks[k](mo, s, c);
    if (s.scale.size() != 0)
      c.vec(s.scale, s.dim, "spec.scale", "one row factor per row (dim), or none");
    c.finite(s.p1, "spec.p1").finite(s.p2, "spec.p2").finite(s.n, "spec.n");
    c.finite(s.target, "spec.target").finite(s.R_off, "spec.R_off");
    c.finite(s.R_right, "spec.R_right").finite(s.c, "spec.c");
    c.number(s.d, "spec.d", -HUGE_VAL, false).number(s.value, "spec.value", -HUGE_VAL, false);
    c.number(s.c0, "spec.c0", -HUGE_VAL, false).number(s.c1, "spec.c1", -HUGE_VAL, false);
    mo.specs.push_back(s);
    std::pair<int, int> cols{0, mo.model.nv};
    if (windowed(s))
    {
      int c0 = mo.model.nv, c1 = 0;
      for (int slot : {s.s1, s.s2})
      {
        const FrameSlot * f = slot >= 0 ? &mo.frame_slots[size_t(slot)] : nullptr;
        if (f && f->c1 > f->c0)
        {
          c0 = std::min(c0, f->c0);
          c1 = std::max(c1, f->c1);
        }
      }
      cols = c1 > c0 ? std::pair<int, int>{c0, c1 - c0} : std::pair<int, int>{0, 0};
    }
    mo.row_cols.insert(mo.row_cols.end(), size_t(s.dim), cols);
    for (int i = 0; i < s.dim; ++i)
    {
      (holonomic(s) ? mo.hol_rows : mo.pf_rows).push_back(mo.m + i);
      if (s.unilateral)
        mo.uni_rows.push_back(mo.m + i);
    }
    mo.m += s.dim;
    if (holonomic(s))
      mo.m_h += s.dim;
    mo.one_block = mo.rows_in_one_block(false);
    mo.one_block_h = mo.rows_in_one_block(true);
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
      if (!windowed(s))
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

  int ModelBuilder::add_contact(const Contour & contour, int s_obj, int s_tip, double r)
  {
    Model & mo = *mo_;
    const Check ck{"System.add_contact"};
    contour.check(ck.where);
    const long nf = long(mo.frame_slots.size());
    ck.index(s_obj, nf, "s_obj", "the object's frame slot of add_frame");
    ck.index(s_tip, nf, "s_tip", "the fingertip's frame slot of add_frame");
    ck.number(r, "r (the fingertip radius) [m]", 0.0, true);
    RollingContact c;
    c.contour = contour;
    c.s_obj = s_obj;
    c.s_tip = s_tip;
    c.r = r;
    mo.contacts.push_back(std::move(c));
    return int(mo.contacts.size()) - 1;
  }

  void check_force(const Model & mo, const ForceSpec & f, const char * where)
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
    const long nf = long(mo.frame_slots.size());
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
    checks[k](mo, f, c);
  }

  void ModelBuilder::add_force(const ForceSpec & spec)
  {
    check_force(*mo_, spec, "System.add_force");
    mo_->force_elements.add(spec);
  }

  void ModelBuilder::add_limit(const JointLimit & lim)
  {
    const Model & mo = *mo_;
    const Check c{"System.add_limit"};
    if (lim.ball) // a ball joint's rotation angle <= upper
    {
      Spec sp;
      sp.kind = Kind::BallAngle;
      sp.iq = lim.iq;
      sp.iv = lim.iv;
      sp.value = lim.upper;
      kinds::check_BallAngle(mo, sp, c);
      if (lim.lower != -HUGE_VAL || !lim.coefs.empty())
        c.fail("a ball limit bounds the angle from above: lower = -inf, no coefs");
      if (!(lim.restitution >= 0.0 && lim.restitution <= 1.0))
        c.fail("restitution = " + std::to_string(lim.restitution) + ", valid: [0, 1]");
      c.number(lim.rest_speed, "rest_speed", 0.0, false);
      mark_loop();
      mo_->limits.push_back(lim);
      return;
    }
    // a joint limit bounds q[iq]; a fixed tendon's, sum_j coefs[j] q[iqs[j]]
    const bool tendon = !lim.coefs.empty() || !lim.iqs.empty() || !lim.ivs.empty();
    const std::size_t n = tendon ? lim.coefs.size() : 1;
    if (tendon && (lim.iqs.size() != n || lim.ivs.size() != n))
      c.fail("iqs, ivs, coefs: one q index, v index and coefficient each (got "
             + std::to_string(lim.iqs.size()) + ", " + std::to_string(lim.ivs.size()) + ", "
             + std::to_string(n) + ")");
    bool any = false;
    for (std::size_t k = 0; k < n; ++k)
    {
      const int iq = tendon ? lim.iqs[k] : lim.iq, iv = tendon ? lim.ivs[k] : lim.iv;
      c.index(iq, mo.nq(), tendon ? "iqs[j]" : "iq", "a q index (nq)");
      c.index(iv, mo.nv(), tendon ? "ivs[j]" : "iv", "a v index (nv)");
      bool one_dof = false; // a joint with one coordinate at iq and one velocity at iv
      for (pinocchio::JointIndex j = 1; j < mo.model.joints.size(); ++j)
        one_dof = one_dof
                  || (mo.model.idx_qs[j] == iq && mo.model.nqs[j] == 1
                      && mo.model.idx_vs[j] == iv && mo.model.nvs[j] == 1);
      if (!one_dof)
        c.fail("iq = " + std::to_string(iq) + ", iv = " + std::to_string(iv)
               + " are not the coordinates of a one-dof joint (limits are for hinge and "
                 "slide joints, and fixed tendons of them)");
      if (tendon)
      {
        c.number(lim.coefs[k], "coefs[j]", -HUGE_VAL, false);
        any = any || lim.coefs[k] != 0.0;
      }
    }
    if (tendon && !any)
      c.fail("coefs are all 0: the tendon's length bounds nothing");
    if (std::isnan(lim.lower) || std::isnan(lim.upper) || !(lim.lower < lim.upper)
        || lim.lower == HUGE_VAL || lim.upper == -HUGE_VAL)
      c.fail("lower = " + std::to_string(lim.lower) + " must be < upper = "
             + std::to_string(lim.upper) + " (numbers; -inf/inf for a one-sided limit)");
    if (!(lim.restitution >= 0.0 && lim.restitution <= 1.0))
      c.fail("restitution = " + std::to_string(lim.restitution) + ", valid: [0, 1]");
    c.number(lim.rest_speed, "rest_speed", 0.0, false);
    mark_loop();
    mo_->limits.push_back(lim);
  }

  void ModelBuilder::add_contact_pair(const ContactPairC & p)
  {
    mark_loop();
    mo_->contact_pairs.push_back(p);
  }

  void ModelBuilder::mark_loop()
  {
    set_held_rows({}); // the loop's rows alone
    Model & m = *mo_;
    m.loop = LoopRows{int(m.specs.size()), m.m, m.m_h, m.hol_rows.size(), m.pf_rows.size(),
                      m.uni_rows.size()};
  }

  namespace
  {
    // a contact row's columns: its frames' (the plane body's too)
    std::pair<int, int> contact_window(const Model & s, const Spec & sp)
    {
      const FrameSlot & f = s.frame_slots[std::size_t(sp.s1)];
      int c0 = f.c0, c1 = f.c1;
      if (sp.s2 >= 0)
      {
        const FrameSlot & g = s.frame_slots[std::size_t(sp.s2)];
        if (g.c1 > g.c0)
        {
          c0 = f.c1 > f.c0 ? std::min(c0, g.c0) : g.c0;
          c1 = std::max(c1, g.c1);
        }
      }
      return {c0, c1 - c0};
    }
  } // namespace

  void ModelBuilder::set_held_rows(const Held & held)
  {
    Model & s = *mo_;
    if (s.loop.specs < 0)
      return; // no limit: the rows are the loop's
    const LoopRows & l = s.loop;
    s.specs.resize(std::size_t(l.specs));
    s.row_cols.resize(std::size_t(l.m));
    s.hol_rows.resize(l.hol);
    s.pf_rows.resize(l.pf);
    s.uni_rows.resize(l.uni);
    s.m = l.m;
    s.m_h = l.m_h;
    const int L = int(s.limits.size());
    for (const auto & [i, side] : held) // held_rows: a row at the bound per limit
    {
      if (i >= L) // a contact point: its row, in its body frames' window
      {
        const Spec & sp = s.contact_specs[std::size_t(side)];
        s.specs.push_back(sp);
        s.row_cols.push_back(contact_window(s, sp));
        s.hol_rows.push_back(s.m);
        ++s.m;
        ++s.m_h;
        continue;
      }
      const JointLimit & lim = s.limits[std::size_t(i)];
      Spec sp; // a fixed tendon's limit: its length held (CoordinateLock)
      sp.kind = lim.ball ? Kind::BallAngle
                         : (lim.coefs.empty() ? Kind::LockedJoint : Kind::CoordinateLock);
      sp.dim = 1;
      sp.iq = lim.iq;
      sp.iv = lim.iv;
      sp.iqs = lim.iqs;
      sp.ivs = lim.ivs;
      sp.coefs = lim.coefs;
      sp.value = side == 0 ? lim.lower : lim.upper;
      s.specs.push_back(sp);
      s.row_cols.emplace_back(0, s.nv());
      s.hol_rows.push_back(s.m);
      ++s.m;
      ++s.m_h;
    }
    // the held contact points with friction: a stuck one's two tangential rows (its
    // anchor fixed in the world or in the plane's body; a round geom's: its material
    // point at the contact rolls without slipping on the still geom or on the plane's
    // body, two Pfaffian RollingPoint rows) after the held rows, in
    // held order; a slipping one's Coulomb force on its normal row
    s.slip.clear();
    for (std::size_t c = 0; c < held.size(); ++c)
    {
      const auto [i, j] = held[c];
      if (i < L || s.contact_pairs[std::size_t(i - L)].mu <= 0.0)
        continue;
      const Spec & sp = s.contact_specs[std::size_t(j)];
      const ContactMode & md = s.contact_mode[std::size_t(j)];
      const ContactPairC & pc = s.contact_pairs[std::size_t(i - L)];
      const double radius = s.contact_spec_radius[std::size_t(j)]; // its held point's
      const bool rim = sp.kind == Kind::RimOnPlane;
      if (!md.stick)
      {
        s.slip.push_back(SlipRow{s.loop.m + int(c), sp.s1, sp.p1, sp.n, md.s0, pc.mu, sp.s2,
                                 radius, rim ? sp.p2 : Vec3::Zero()});
        continue;
      }
      Vec3 t[2];
      tangent_basis(sp.n, t[0], t[1]);
      for (const Vec3 & tk : t)
      {
        Spec r = sp;
        r.n = tk;
        if (rim || radius > 0.0)
        { // t . (v1(c) - v2(c)) = 0 at the contact c = core - radius n: no Phi (t, n in
          // the plane body's axes where it moves: spec s2, turning with it)
          // (a rim's: its lowest point rolls, RimRolling)
          r.kind = rim ? Kind::RimRolling : Kind::RollingPoint;
          if (!rim)
            r.target = -radius * sp.n;
          s.specs.push_back(r);
          s.row_cols.push_back(contact_window(s, sp));
          s.pf_rows.push_back(s.m);
          ++s.m;
          continue;
        }
        if (sp.kind == Kind::PointOnBodyPlane) // a plane through the anchor on body 2
        {
          r.has_p2 = true;
          r.p2 = md.anchor;
          r.d = 0.0;
        }
        else
          r.d = tk.dot(md.anchor);
        s.specs.push_back(r);
        s.row_cols.push_back(contact_window(s, sp));
        s.hol_rows.push_back(s.m);
        ++s.m;
        ++s.m_h;
      }
    }
    s.one_block = s.rows_in_one_block(false);
    s.one_block_h = s.rows_in_one_block(true);
  }
} // namespace pfaff
