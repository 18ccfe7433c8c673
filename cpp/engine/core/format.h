// Numbers in messages. A value a user wrote (a config parameter, a matrix
// entry) is printed in the shortest decimal form that reads back as the same
// double: "0.1", "1e-09", "-1", "inf". std::to_string's six fixed decimals
// would print 1e-9 as "0.000000" and hide the value the message is about.
#pragma once
#include <string>

namespace jaxamg {

std::string format_number(double value);

}  // namespace jaxamg
