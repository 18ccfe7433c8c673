// AmgX's "AMG Grid:" table (print_grid_stats), reproduced column for column.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/types.h"

namespace jaxamg {

struct GridLevelStats {
  Index rows = 0;
  Index nnz = 0;
  std::size_t bytes = 0;  // storage of the level (matrices and work vectors)
  int parts = 1;          // processes holding the level (a distributed one: all)
};

// The table for `levels` (finest first), each line ending in '\n'. Every
// level is a device-style level "(D)", as AmgX prints a GPU hierarchy; a
// distributed level has its global rows and nonzeros, and its storage
// summed over the processes.
std::string format_grid_stats(const std::vector<GridLevelStats>& levels);

// Whether the AMG of config scope `scope` prints its grid table: print_grid_stats
// set and verbosity_level >= 3 in that scope, read at print time as AmgX does
// (a default-scope solver may have cleared it). Every hierarchy asks here: host,
// distributed and device.
bool wants_grid_stats(const Config& cfg, const std::string& scope);

}  // namespace jaxamg
