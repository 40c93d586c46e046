// The set-up of a Model: a ModelBuilder takes the calls the lowering makes (pfaff.core's
// build and the lowerings it calls: add_frame, add, add_contact, add_force,
// set_tableau, set_adaptive, set_plant, observe, add_limit, the options, the actuators'
// controls) and build()
// hands over the Model, read-only from then on. A built Model changes only by going
// back to a builder (ModelBuilder(std::move(model))): the same object, changed in
// place, so a reference to it (a Differentiator's) stays valid. System
// (sim/system.hpp) makes each of its set-up calls so.
#pragma once

#include <memory>
#include <string>

#include "model/core.hpp"

namespace pfaff
{
  class ModelBuilder
  {
  public:
    /// a new Model of the serialised pinocchio.Model (binary: saveToBinary's bytes,
    /// else saveToString's text): no frame slot, no row, RK4
    explicit ModelBuilder(const std::string & model_data, bool binary = false);
    /// a built Model to change (mo must not be null)
    explicit ModelBuilder(std::unique_ptr<const Model> mo);

    /// the Model as set up so far
    const Model & model() const { return *mo_; }
    /// the Model, read-only from now on; the builder holds nothing after it. Its
    /// actearly elements look ahead by its options' step dt, whichever change came last
    std::unique_ptr<const Model> build()
    {
      if (mo_)
        mo_->force_elements.set_step(mo_->opt.dt);
      return std::move(mo_);
    }

    Options & options() { return mo_->opt; }
    /// the slot of frame `name` among the frames the rows and force elements read
    int add_frame(const std::string & name);
    /// observe a frame at controller samples (not at the stages): returns its slot
    int observe(const std::string & name);
    /// a constraint spec, checked (its kind's own checks: check_K in its file)
    void add(const Spec & spec);
    /// a fingertip (slot s_tip, radius r) on the contour of a planar body (slot s_obj):
    /// returns its index for Spec::contact
    int add_contact(const Contour & contour, int s_obj, int s_tip, double r);
    /// a built-in force element (forces.hpp), checked (check_force)
    void add_force(const ForceSpec & spec);
    /// the actuators' controls: u[spec.ictrl] into each element that reads one
    void set_ctrl(const VecX & u) { mo_->force_elements.set_ctrl(u); }
    /// the activations act[spec.iact] at the time t0 from which the ctrl is held
    void set_act(const VecX & act, double t0) { mo_->force_elements.set_act(act, t0); }
    /// the explicit Runge-Kutta method a step takes: a (s x s, strictly lower
    /// triangular) and b (s) of its Butcher tableau, its nodes c = a's row sums
    void set_tableau(const MatX & a, const VecX & b);
    /// an adaptive step instead (nq == nv): SciPy's pair (a, b, c, e, e3, order)
    void set_adaptive(const MatX & a, const VecX & b, const VecX & c, const VecX & e,
                      const VecX & e3, int order);
    /// a mechanism given in closed form (Model::plant; null: Pinocchio's model)
    void set_plant(std::shared_ptr<const PlantLaw> plant) { mo_->plant = std::move(plant); }
    /// a joint limit, checked (std::invalid_argument naming the field); the loop's rows
    /// are those added so far (sim/limits.hpp)
    void add_limit(const JointLimit & lim);
    /// the active rows: the loop's, then a LockedJoint row at its bound per held limit
    /// and a contact row (contact_specs) per held contact point
    void set_held_rows(const Held & held);
    /// the compiled model the contact pairs name (sim/contact.cpp: set_contact_world)
    void set_contact_world(ContactWorld w) { mo_->contact_world = std::move(w); }
    /// a contact pair; the loop's rows are those added so far (as add_limit's)
    void add_contact_pair(const ContactPairC & p);
    /// the rows of the contact points a run may hold (sim/contact_events.cpp)
    /// (per spec: its pair, its held point's radius, its friction mode)
    void set_contact_rows(
      std::vector<Spec> specs, std::vector<int> pair, std::vector<double> radius,
      std::vector<ContactMode> modes = {})
    {
      modes.resize(specs.size());
      radius.resize(specs.size(), 0.0);
      mo_->contact_specs = std::move(specs);
      mo_->contact_spec_pair = std::move(pair);
      mo_->contact_spec_radius = std::move(radius);
      mo_->contact_mode = std::move(modes);
    }
    /// contact spec j's friction mode (the rows change at the next set_held_rows)
    void set_contact_mode(int j, const ContactMode & m)
    {
      mo_->contact_mode.at(std::size_t(j)) = m;
    }

  private:
    /// the rows added so far made the loop's (add_limit, add_contact_pair: the
    /// unilateral rows come after them)
    void mark_loop();
    /// the slot of frame `name` (std::invalid_argument naming `where` when unknown)
    FrameSlot new_frame(const std::string & name, const char * where) const;

    std::unique_ptr<Model> mo_;
  };

  /// refuse a force element's spec that names no frame slot, coordinate or finite
  /// parameter of mo (std::invalid_argument naming `where` and the field)
  void check_force(const Model & mo, const ForceSpec & spec, const char * where);
} // namespace pfaff
