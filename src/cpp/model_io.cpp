// Model transfer: the Python side's pinocchio.Model arrives as Pinocchio's own text
// serialisation (Model.saveToString), which writes doubles with round-trip precision.
// Kept in its own compile unit: the Boost serialisation headers are heavy.
#include "pinocchio/serialization.hpp"


namespace pfaff
{
  // declared in core.hpp (not included: this unit is rebuilt only when it changes)
  pinocchio::Model load_model(const std::string & text)
  {
    pinocchio::Model model;
    model.loadFromString(text);
    return model;
  }
} // namespace pfaff
