// Model transfer: the Python side's pinocchio.Model arrives as Pinocchio's own
// serialisation, binary (Model.saveToBinary into a StreamBuffer: a copy of the doubles,
// read here in microseconds) or text (Model.saveToString, doubles written with
// round-trip precision, parsed at some 20 us per joint). Kept in its own compile unit:
// the Boost serialisation headers are heavy.
#include <cstring>
#include <stdexcept>

#include "pinocchio/serialization.hpp"

namespace pfaff
{
  // declared in core_types.hpp (not included: this unit is rebuilt only when it changes)
  pinocchio::Model load_model(const std::string & data, bool binary)
  {
    pinocchio::Model model;
    try
    {
      if (binary)
      {
        pinocchio::serialization::StaticBuffer buffer(data.size());
        std::memcpy(buffer.data(), data.data(), data.size());
        model.loadFromBinary(buffer);
      }
      else
        model.loadFromString(data);
    }
    catch (const std::exception & e)
    {
      const std::string how = binary ? "binary" : "text";
      const std::string by = binary ? "Model.saveToBinary" : "Model.saveToString";
      throw std::invalid_argument("the model is not Pinocchio's " + how
                                  + " serialisation of a pinocchio.Model (" + by + "): "
                                  + e.what());
    }
    return model;
  }
} // namespace pfaff
