#pragma once
#include <string>
#include "pinocchio/multibody.hpp"
namespace pfaff
{
  pinocchio::Model load_model(const std::string & text);
}
